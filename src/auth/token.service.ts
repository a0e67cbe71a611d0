import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig, SCOPES, Scope } from '../config/config.types';
import { AuthenticatedClient } from './auth.types';

const AUDIENCE = 'meeting-event-bridge';

interface TokenClaims {
  sub: string;
  scope: string;
  /** Set on the tokens of portal links (src/console/portal-links.service.ts). */
  portal?: true;
}

export interface IssueOptions {
  /** Lifetime instead of AUTH_TOKEN_TTL_SECONDS. */
  ttlSeconds?: number;
  /** A portal link's session: it may not mint further links (which would outlive it). */
  portal?: boolean;
}

/**
 * Issues and verifies the service's own HS256 access tokens. A token counts only for a client
 * that AUTH_CLIENTS still lists, and only with the scopes that client holds now (docs/api.md#receiver-health): a
 * client removed from the list is locked out at this process's start, whatever its tokens say.
 */
@Injectable()
export class TokenService {
  private readonly currentScopes: Map<string, Set<Scope>>;

  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.currentScopes = new Map(config.auth.clients.map((c) => [c.clientId, new Set(c.scopes)]));
  }

  issue(
    clientId: string,
    scopes: Scope[],
    options: IssueOptions = {},
  ): { token: string; expiresIn: number } {
    const expiresIn = options.ttlSeconds ?? this.config.auth.tokenTtlSeconds;
    const claims: TokenClaims = { sub: clientId, scope: scopes.join(' ') };
    if (options.portal) claims.portal = true;
    const token = this.jwt.sign(claims, {
      secret: this.config.auth.tokenSecret,
      algorithm: 'HS256',
      audience: AUDIENCE,
      issuer: AUDIENCE,
      expiresIn,
    });
    return { token, expiresIn };
  }

  /**
   * Returns null for any token that is malformed, forged, expired, for another audience, or
   * of a client no longer configured.
   */
  verify(token: string): AuthenticatedClient | null {
    try {
      const claims = this.jwt.verify<TokenClaims>(token, {
        secret: this.config.auth.tokenSecret,
        algorithms: ['HS256'],
        audience: AUDIENCE,
        issuer: AUDIENCE,
      });
      if (typeof claims.sub !== 'string' || typeof claims.scope !== 'string') return null;
      const current = this.currentScopes.get(claims.sub);
      if (!current) return null;
      const scopes = claims.scope
        .split(' ')
        .filter(
          (s): s is Scope => (SCOPES as readonly string[]).includes(s) && current.has(s as Scope),
        );
      return claims.portal === true
        ? { clientId: claims.sub, scopes, portal: true }
        : { clientId: claims.sub, scopes };
    } catch {
      return null;
    }
  }
}
