import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { ZoomApiError, platformHeaders } from './zoom-error';
import { ZoomHttp, ZoomHttpResponse } from './zoom-http';
import { PathEncoders, ZoomOperation, buildZoomPath } from './zoom-operations';
import { ZoomToken, ZoomTokenProvider, missingZoomCredentials } from './zoom-token.provider';
import { ZoomMeetingRecording, ZoomResult } from './zoom.types';

/** Where a call's token comes from: the server-to-server one unless the call names another. */
export interface ZoomTokenSource {
  get(): Promise<ZoomToken>;
  /** The platform refused `token` (401). */
  invalidate(token: ZoomToken): void;
}

export interface ZoomCall {
  /** An installed account's tokens (docs/accounts.md#passthrough); absent: server-to-server. */
  tokens?: ZoomTokenSource;
  /** Path parameters by their name in the operation's template (`userId`, `meetingId`). */
  params?: Record<string, string>;
  /** The rules of the module that owns the operation's path parameters; others are encoded once. */
  pathRules?: PathEncoders;
  /** A query string passed on as it is (already encoded, without `?`). */
  query?: string;
  /** Sent as they are: JSON text, or the bytes of a multipart body. */
  body?: { contentType: string; bytes: Buffer | string };
}

/** A platform answer passed on as bytes: its 2xx status, its content type and headers. */
export interface ZoomRawResult {
  status: number;
  contentType: string | undefined;
  /** The platform's tracking id and rate-limit headers. */
  headers: Record<string, string>;
  body: Buffer;
}

/** A recording file on its way from the platform: pipe `body`, then it is done. */
export interface ZoomDownload {
  /** 200, or 206 for a range. */
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

const DOWNLOAD_HEADERS = [
  'content-type',
  'content-length',
  'content-disposition',
  'content-range',
  'accept-ranges',
] as const;
const MAX_REDIRECTS = 5;

/** The recording operation the client itself calls (recording automation, downloads). */
export const GET_MEETING_RECORDINGS: ZoomOperation = {
  method: 'GET',
  path: '/meetings/{meetingId}/recordings',
};

function parseUrl(value: string, base?: URL): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

const single = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

const isSubdomainOf = (hostname: string, base: string) =>
  hostname === base || hostname.endsWith(`.${base}`);

/**
 * The platform REST client: every call carries the shared server-to-server token, and a call
 * the platform answers 401 is retried once with a renewed token. Errors are ZoomApiError,
 * already in the shape the API answers with.
 */
@Injectable()
export class ZoomClient {
  private readonly logger = new Logger(ZoomClient.name);
  /** The credential variables still unset; passthrough answers 503 naming them. */
  readonly missingCredentials: string[];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: ZoomTokenProvider,
    private readonly http: ZoomHttp,
  ) {
    this.missingCredentials = missingZoomCredentials(config);
  }

  /** Whether ZOOM_ACCOUNT_ID, ZOOM_CLIENT_ID and ZOOM_CLIENT_SECRET are all set. */
  get configured(): boolean {
    return this.missingCredentials.length === 0;
  }

  /** Calls one operation and returns its 2xx answer, JSON parsed. */
  async call<T = unknown>(operation: ZoomOperation, call: ZoomCall = {}): Promise<ZoomResult<T>> {
    const res = await this.exchange(operation, call);
    return {
      status: res.statusCode,
      headers: platformHeaders(res.headers),
      body: (await this.http.readJson(res)) as T | undefined,
    };
  }

  /** Calls one operation and returns its 2xx answer as the platform sent it, bytes unread. */
  async forward(operation: ZoomOperation, call: ZoomCall = {}): Promise<ZoomRawResult> {
    const res = await this.exchange(operation, call);
    return {
      status: res.statusCode,
      contentType: single(res.headers['content-type']),
      headers: platformHeaders(res.headers),
      body: await this.http.readBody(res),
    };
  }

  /**
   * A meeting's cloud recording with its files (`GET /meetings/{meetingId}/recordings`).
   * `pathRules` are the recordings module's (src/recordings/recording-path-rules.ts): how the
   * platform wants a meeting UUID in that path is theirs to say, not the client's.
   */
  async getMeetingRecordings(
    meetingId: string,
    pathRules: PathEncoders,
  ): Promise<ZoomMeetingRecording> {
    const { body } = await this.call<ZoomMeetingRecording>(GET_MEETING_RECORDINGS, {
      params: { meetingId },
      pathRules,
    });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw ZoomApiError.badResponse('The meeting platform sent a recording that is not an object');
    }
    return body;
  }

  /**
   * Opens a recording file's `download_url` with the token and hands back the byte stream
   * unread; `range` (the caller's `Range` header) goes along to every hop. The token goes only
   * to the platform host of the download_url; a redirect is followed only to the platform's own
   * hosts, without the token when it leaves that origin (as browsers do).
   */
  async download(downloadUrl: string, range?: string): Promise<ZoomDownload> {
    const res = await this.withToken(undefined, (token) => {
      const bases = this.platformBases(token.apiBaseUrl);
      const start = this.platformUrl(downloadUrl, bases);
      const auth = { authorization: `Bearer ${token.accessToken}` };
      return this.followRedirects(start, { bases, onStartOrigin: auth }, range);
    });
    return this.opened(res);
  }

  /**
   * Opens a `download_url` with the `download_token` of the recording event instead of the
   * server-to-server token (an event-only deployment): as `?access_token=`, as the platform
   * documents it, on the platform's own hosts only (the configured ones; there is no token's
   * api_url without credentials).
   */
  async downloadWithEventToken(
    downloadUrl: string,
    downloadToken: string,
    range?: string,
  ): Promise<ZoomDownload> {
    const bases = this.platformBases(null);
    const start = this.platformUrl(downloadUrl, bases);
    start.searchParams.set('access_token', downloadToken);
    return this.opened(await this.followRedirects(start, { bases, onStartOrigin: {} }, range));
  }

  private async opened(res: ZoomHttpResponse): Promise<ZoomDownload> {
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const body = await this.http.readJson(res, true);
      throw ZoomApiError.fromResponse(res.statusCode, res.headers, body);
    }
    const headers = platformHeaders(res.headers);
    for (const name of DOWNLOAD_HEADERS) {
      const value = single(res.headers[name]);
      if (value !== undefined) headers[name] = value;
    }
    return { status: res.statusCode, headers, body: res.body };
  }

  /** Sends one call with the token; a non-2xx answer is thrown as a ZoomApiError. */
  private async exchange(operation: ZoomOperation, call: ZoomCall): Promise<ZoomHttpResponse> {
    const path = buildZoomPath(operation, call.params, call.query, call.pathRules);
    const { body } = call;
    const res = await this.withToken(call.tokens, (token) =>
      this.http.send(`${token.apiBaseUrl}${path}`, {
        method: operation.method,
        headers: {
          authorization: `Bearer ${token.accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': body.contentType }),
        },
        body: body?.bytes,
        signal: this.http.deadline(),
      }),
    );
    if (res.statusCode >= 200 && res.statusCode < 300) return res;
    throw ZoomApiError.fromResponse(
      res.statusCode,
      res.headers,
      await this.http.readJson(res, true),
    );
  }

  private async withToken(
    source: ZoomTokenSource | undefined,
    send: (token: ZoomToken) => Promise<ZoomHttpResponse>,
  ): Promise<ZoomHttpResponse> {
    if (!source && !this.configured) throw ZoomApiError.notConfigured(this.missingCredentials);
    const tokens = source ?? this.tokens;
    const token = await tokens.get();
    const first = await send(token);
    if (first.statusCode !== 401) return first;
    await this.http.discard(first);
    tokens.invalidate(token);
    this.logger.log('the platform refused the access token: renewing it and retrying once');
    return send(await tokens.get());
  }

  /** `auth.onStartOrigin`: the headers that may go to the download_url's own origin only. */
  private async followRedirects(
    start: URL,
    auth: { bases: string[]; onStartOrigin: Record<string, string> },
    range: string | undefined,
  ): Promise<ZoomHttpResponse> {
    let target = start;
    for (let hop = 0; ; hop++) {
      const res = await this.http.send(target.href, {
        method: 'GET',
        headers: {
          ...(target.origin === start.origin ? auth.onStartOrigin : {}),
          ...(range === undefined ? {} : { range }),
        },
      });
      const location = single(res.headers.location);
      if (res.statusCode < 300 || res.statusCode >= 400 || !location) return res;
      await this.http.discard(res);
      if (hop >= MAX_REDIRECTS) {
        throw ZoomApiError.badResponse(
          `The recording download redirected more than ${MAX_REDIRECTS} times`,
        );
      }
      target = this.redirectTarget(location, target, auth.bases);
    }
  }

  /**
   * Where a download redirect may lead: a platform host (the host names of ZOOM_API_URL,
   * ZOOM_OAUTH_URL and the token's api_url, or a subdomain of one), over http(s) and never from
   * https down to http. Anything else (a loopback or metadata address, another site) is refused
   * before it is asked.
   */
  private redirectTarget(location: string, from: URL, bases: string[]): URL {
    const next = parseUrl(location, from);
    if (!next || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
      throw ZoomApiError.badResponse('The recording download redirected to an invalid location');
    }
    if (from.protocol === 'https:' && next.protocol !== 'https:') {
      throw ZoomApiError.badResponse('The recording download redirected from https to http');
    }
    const hosts = bases.map((base) => new URL(base).hostname);
    if (!hosts.some((host) => isSubdomainOf(next.hostname, host))) {
      throw ZoomApiError.badResponse(
        `The recording download redirected off the meeting platform (${next.hostname})`,
      );
    }
    return next;
  }

  /** The configured platform bases, and the token's api_url when there is a token. */
  private platformBases(tokenApiUrl: string | null): string[] {
    const configured = [this.config.zoom.oauthUrl, this.config.zoom.apiUrl];
    return tokenApiUrl === null ? configured : [...configured, tokenApiUrl];
  }

  /**
   * A token must not leave the platform: a download_url is accepted only on a platform host
   * (or a subdomain of one, e.g. us06web.zoom.us under zoom.us), with the same scheme and port.
   */
  private platformUrl(value: string, bases: string[]): URL {
    const url = parseUrl(value);
    const onPlatform = (base: URL) =>
      url !== null &&
      url.protocol === base.protocol &&
      url.port === base.port &&
      isSubdomainOf(url.hostname, base.hostname);
    if (!url || !bases.some((base) => onPlatform(new URL(base)))) {
      throw ZoomApiError.badResponse('The recording download_url is not on the meeting platform');
    }
    return url;
  }
}
