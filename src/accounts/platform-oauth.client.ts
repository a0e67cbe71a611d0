import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { ZoomApiError } from '../zoom/zoom-error';
import { ZoomHttp } from '../zoom/zoom-http';
import { tokenRenewAt } from '../zoom/zoom-token.provider';

/** What the platform's token endpoint gave for an installed account. */
export interface AccountTokenSet {
  accessToken: string;
  refreshToken: string;
  /** Epoch ms at which the access token stops working. */
  expiresAt: number;
  /**
   * Epoch ms from which it is renewed: bounded as the server-to-server token's (tokenRenewAt),
   * so a 30 s `expires_in` does not renew on every call (docs/accounts.md#tokens).
   */
  renewAt: number;
  scopes: string;
  /** The token's regional REST base (api_url + /v2); null when it named none. */
  apiBaseUrl: string | null;
}

/** The platform refused a code or a refresh token (`invalid_grant` and kin): install again. */
export class GrantRefused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(`the platform refused the grant (${status}: ${reason})`);
  }
}

/** The app variables still unset, as docs/configuration.md names them. */
export function missingAppCredentials(config: AppConfig): string[] {
  const { clientId, clientSecret, redirectUrl } = config.zoom.app;
  return (
    [
      ['ZOOM_APP_CLIENT_ID', clientId],
      ['ZOOM_APP_CLIENT_SECRET', clientSecret],
      ['ZOOM_APP_REDIRECT_URL', redirectUrl],
    ] as const
  )
    .filter(([, value]) => !value)
    .map(([name]) => name);
}

const field = (body: unknown, name: string): unknown =>
  typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;

/** api_url as a REST base, only when it is an http(s) URL. */
function restBase(apiUrl: unknown): string | null {
  if (typeof apiUrl !== 'string' || !/^https?:\/\/[^/]/.test(apiUrl)) return null;
  const trimmed = apiUrl.replace(/\/+$/, '');
  return /\/v2$/.test(trimmed) ? trimmed : `${trimmed}/v2`;
}

/**
 * The platform OAuth app's own calls (docs/accounts.md): the authorization-code exchange, the
 * refresh-token renewal, `GET /users/me` and the revocation. No token or code is put in an
 * error message: they end up in logs and answers.
 */
@Injectable()
export class PlatformOAuthClient {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly http: ZoomHttp,
  ) {}

  exchangeCode(code: string, verifier: string): Promise<AccountTokenSet> {
    return this.tokenCall({
      grant_type: 'authorization_code',
      code,
      redirect_uri: this.config.zoom.app.redirectUrl ?? '',
      code_verifier: verifier,
    });
  }

  renew(refreshToken: string): Promise<AccountTokenSet> {
    return this.tokenCall({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /** The account of a user's token, from `GET /users/me`. */
  async accountOf(token: AccountTokenSet): Promise<string> {
    const base = token.apiBaseUrl ?? this.config.zoom.apiUrl;
    const res = await this.http.send(`${base}/users/me`, {
      method: 'GET',
      headers: { authorization: `Bearer ${token.accessToken}`, accept: 'application/json' },
      signal: this.http.deadline(),
    });
    const body = await this.http.readJson(res, true);
    if (res.statusCode !== 200) throw ZoomApiError.fromResponse(res.statusCode, res.headers, body);
    const accountId = field(body, 'account_id');
    if (typeof accountId !== 'string' || accountId === '') {
      throw ZoomApiError.badResponse('The meeting platform sent a user without account_id');
    }
    return accountId;
  }

  /** Revokes a token at the platform; a token it no longer knows counts as revoked. */
  async revoke(token: string): Promise<void> {
    const res = await this.http.send(`${this.config.zoom.oauthUrl}/oauth/revoke`, {
      method: 'POST',
      headers: this.basicHeaders(),
      body: new URLSearchParams({ token }).toString(),
      signal: this.http.deadline(),
    });
    const body = await this.http.readJson(res, true);
    if (res.statusCode >= 500) {
      throw ZoomApiError.fromResponse(res.statusCode, res.headers, body, 'token');
    }
  }

  private basicHeaders(): Record<string, string> {
    const { clientId, clientSecret } = this.config.zoom.app;
    return {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
  }

  private async tokenCall(form: Record<string, string>): Promise<AccountTokenSet> {
    const res = await this.http.send(`${this.config.zoom.oauthUrl}/oauth/token`, {
      method: 'POST',
      headers: this.basicHeaders(),
      body: new URLSearchParams(form).toString(),
      signal: this.http.deadline(),
    });
    const body = await this.http.readJson(res, true);
    if (res.statusCode === HttpStatus.BAD_REQUEST || res.statusCode === HttpStatus.UNAUTHORIZED) {
      const error = field(body, 'error');
      const reason = field(body, 'reason') ?? field(body, 'error_description') ?? error;
      throw new GrantRefused(
        res.statusCode,
        typeof reason === 'string' ? reason : 'no reason given',
      );
    }
    if (res.statusCode !== 200) {
      throw ZoomApiError.fromResponse(res.statusCode, res.headers, body, 'token');
    }
    const accessToken = field(body, 'access_token');
    const refreshToken = field(body, 'refresh_token');
    const expiresIn = field(body, 'expires_in');
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw ZoomApiError.badResponse(
        'The meeting platform sent a token answer without access_token',
      );
    }
    if (typeof refreshToken !== 'string' || refreshToken === '') {
      throw ZoomApiError.badResponse(
        'The meeting platform sent a token answer without refresh_token',
      );
    }
    if (typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      throw ZoomApiError.badResponse('The meeting platform sent a token answer without expires_in');
    }
    const scope = field(body, 'scope');
    const now = Date.now();
    return {
      accessToken,
      refreshToken,
      expiresAt: now + expiresIn * 1000,
      renewAt: tokenRenewAt(now, expiresIn * 1000),
      scopes: typeof scope === 'string' ? scope : '',
      apiBaseUrl: restBase(field(body, 'api_url')),
    };
  }
}
