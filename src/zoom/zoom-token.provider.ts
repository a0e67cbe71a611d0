import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { ZoomApiError } from './zoom-error';
import { ZoomHttp } from './zoom-http';

export interface ZoomToken {
  accessToken: string;
  /** REST base for calls made with this token: its `api_url` + `/v2`, or ZOOM_API_URL. */
  apiBaseUrl: string;
  /** Epoch ms at which the platform stops accepting the token. */
  expiresAt: number;
  /**
   * Epoch ms from which the cache asks for a new token: TOKEN_RENEW_MARGIN_MS before expiry,
   * but never sooner than TOKEN_MIN_REUSE_MS nor later than TOKEN_MAX_REUSE_MS after it came.
   */
  renewAt: number;
}

/** Renew this long before the platform's expiry, so a call never leaves with a dying token. */
export const TOKEN_RENEW_MARGIN_MS = 60_000;
/**
 * Bounds on how long one token is used, whatever `expires_in` says (docs/inbound-sources.md,
 * "What the bridge does with a frame or a token it cannot trust"). A token is renewed at most
 * once a minute: `expires_in: 30` once made every call and the socket renew, about 300 times
 * a second. And at least once a day: `expires_in: 3e6` (35 days) put the socket's renewal
 * timer past what setTimeout holds, which then fired at once, again and again. A token the
 * platform refuses before then is still renewed at once (invalidate).
 */
export const TOKEN_MIN_REUSE_MS = 60_000;
export const TOKEN_MAX_REUSE_MS = 24 * 60 * 60 * 1000;

/** When a token obtained at `now` that the platform says lasts `expiresInMs` is renewed. */
export function tokenRenewAt(now: number, expiresInMs: number): number {
  const reuse = Math.min(
    Math.max(expiresInMs - TOKEN_RENEW_MARGIN_MS, TOKEN_MIN_REUSE_MS),
    TOKEN_MAX_REUSE_MS,
  );
  return now + reuse;
}

interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
  api_url?: unknown;
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

/** The credential variables still unset, in the order docs/configuration.md lists them. */
export function missingZoomCredentials(config: AppConfig): string[] {
  const { accountId, clientId, clientSecret } = config.zoom;
  return [
    ['ZOOM_ACCOUNT_ID', accountId],
    ['ZOOM_CLIENT_ID', clientId],
    ['ZOOM_CLIENT_SECRET', clientSecret],
  ]
    .filter(([, value]) => !value)
    .map(([name]) => name as string);
}

/**
 * The server-to-server OAuth token (grant_type=account_credentials). One token is cached and
 * shared; at most one token request is in flight however many callers wait, because older
 * accounts saw each new token invalidate the one before.
 */
@Injectable()
export class ZoomTokenProvider {
  private readonly logger = new Logger(ZoomTokenProvider.name);
  private current: ZoomToken | null = null;
  private pending: Promise<ZoomToken> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly http: ZoomHttp,
  ) {}

  async get(): Promise<ZoomToken> {
    if (this.current && Date.now() < this.current.renewAt) {
      return this.current;
    }
    this.pending ??= this.request().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  /**
   * Forgets `token` after the platform refused it. Callers holding an older token than the
   * current one do not throw the newer one away, so a burst of 401s renews only once.
   */
  invalidate(token: ZoomToken): void {
    if (this.current === token) this.current = null;
  }

  private async request(): Promise<ZoomToken> {
    const missing = missingZoomCredentials(this.config);
    if (missing.length > 0) throw ZoomApiError.notConfigured(missing);
    const { accountId, clientId, clientSecret, oauthUrl } = this.config.zoom;
    const signal = this.http.deadline();
    const res = await this.http.send(`${oauthUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({
        grant_type: 'account_credentials',
        account_id: accountId as string,
      }).toString(),
      signal,
    });
    if (res.statusCode !== 200) {
      const body = await this.http.readJson(res, true);
      throw ZoomApiError.fromResponse(res.statusCode, res.headers, body, 'token');
    }
    const answer = ((await this.http.readJson(res)) ?? {}) as TokenAnswer;
    const { access_token: accessToken, expires_in: expiresIn } = answer;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw ZoomApiError.badResponse(
        'The meeting platform sent a token answer without access_token',
      );
    }
    if (typeof expiresIn !== 'number' || !(expiresIn > 0)) {
      throw ZoomApiError.badResponse('The meeting platform sent a token answer without expires_in');
    }
    const now = Date.now();
    const token: ZoomToken = {
      accessToken,
      apiBaseUrl: this.apiBaseUrl(answer.api_url),
      expiresAt: now + expiresIn * 1000,
      renewAt: tokenRenewAt(now, expiresIn * 1000),
    };
    this.current = token;
    this.logger.log(`server-to-server token obtained, expires in ${expiresIn} s`);
    return token;
  }

  /** Regional data residency: the token names the account's API host. */
  private apiBaseUrl(apiUrl: unknown): string {
    if (typeof apiUrl !== 'string' || apiUrl === '') return this.config.zoom.apiUrl;
    if (!isHttpUrl(apiUrl)) {
      this.logger.warn('token api_url is not an http(s) URL: using ZOOM_API_URL');
      return this.config.zoom.apiUrl;
    }
    const base = apiUrl.replace(/\/+$/, '');
    return base.endsWith('/v2') ? base : `${base}/v2`;
  }
}
