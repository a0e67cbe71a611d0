import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { AuthenticatedClient } from '../auth/auth.types';
import { TokenService } from '../auth/token.service';
import { ApiError } from '../common/api-error';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig, Scope } from '../config/config.types';
import { CONSOLE_PATH } from './console-assets';
import { PORTAL_TTL, PortalLinkResponse } from './dto/create-portal-link.dto';

/** The most a portal link's session may do: the console's own pages, nothing else. */
export const PORTAL_SCOPES: readonly Scope[] = ['webhooks:read', 'webhooks:write'];

/**
 * Portal links (docs/console.md): a console URL that signs a person in as the calling client
 * without its secret. The link carries an access token of its own, narrowed to the webhook
 * scopes the caller holds and expiring with the link; the console uses it as its bearer
 * token. It sits in the URL's fragment, so it never reaches a server log or a Referer.
 */
@Injectable()
export class PortalLinksService {
  constructor(
    private readonly tokens: TokenService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  create(
    client: AuthenticatedClient,
    ttlSeconds: number = PORTAL_TTL.default,
    now: Date = new Date(),
  ): PortalLinkResponse {
    if (!this.config.console.enabled) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'The console is turned off (CONSOLE_ENABLED=false), so a portal link would lead nowhere',
      );
    }
    // A link's session could otherwise mint a fresh link before it expires, and so on forever.
    if (client.portal) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        "A portal link's session cannot create portal links; use the client's own credentials",
      );
    }
    const scopes = PORTAL_SCOPES.filter((scope) => client.scopes.includes(scope));
    const { token } = this.tokens.issue(client.clientId, scopes, { ttlSeconds, portal: true });
    // JWT expiry counts whole seconds from the issue time, so the answer does too.
    const expiresAt = new Date((Math.floor(now.getTime() / 1000) + ttlSeconds) * 1000);
    return {
      url: `${this.config.publicBaseUrl}/${CONSOLE_PATH}/#portal=${token}`,
      expires_at: expiresAt.toISOString(),
    };
  }
}
