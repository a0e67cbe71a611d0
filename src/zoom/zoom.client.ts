import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { ZoomApiError } from './zoom-error';
import { ZoomHttp, ZoomHttpResponse } from './zoom-http';
import {
  ZOOM_OPERATIONS,
  ZoomOperationName,
  ZoomQueryValue,
  buildZoomPath,
} from './zoom-operations';
import { ZoomToken, ZoomTokenProvider, missingZoomCredentials } from './zoom-token.provider';
import { ZoomMeetingRecording, ZoomResult } from './zoom.types';

export interface ZoomCall {
  /** Path parameters by their name in the operation's template (`userId`, `meetingId`). */
  params?: Record<string, string>;
  query?: Record<string, ZoomQueryValue>;
  /** Sent as JSON. */
  body?: unknown;
}

/** A recording file on its way from the platform: pipe `body`, then it is done. */
export interface ZoomDownload {
  headers: Partial<Record<(typeof DOWNLOAD_HEADERS)[number], string>>;
  body: Readable;
}

const DOWNLOAD_HEADERS = ['content-type', 'content-length', 'content-disposition'] as const;
const MAX_REDIRECTS = 5;

function parseUrl(value: string, base?: URL): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

const single = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

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

  /** Calls one operation of ZOOM_OPERATIONS and returns its 2xx answer. */
  async call<T = unknown>(name: ZoomOperationName, call: ZoomCall = {}): Promise<ZoomResult<T>> {
    const operation = ZOOM_OPERATIONS[name];
    const path = buildZoomPath(operation, call.params, call.query);
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    const res = await this.withToken((token) =>
      this.http.send(`${token.apiBaseUrl}${path}`, {
        method: operation.method,
        headers: {
          authorization: `Bearer ${token.accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
        signal: this.http.deadline(),
      }),
    );
    if (res.statusCode >= 200 && res.statusCode < 300) {
      return { status: res.statusCode, body: (await this.http.readJson(res)) as T | undefined };
    }
    throw ZoomApiError.fromResponse(
      res.statusCode,
      res.headers,
      await this.http.readJson(res, true),
    );
  }

  /** A meeting's cloud recording with its files (`GET /meetings/{meetingId}/recordings`). */
  async getMeetingRecordings(meetingId: string): Promise<ZoomMeetingRecording> {
    const { body } = await this.call<ZoomMeetingRecording>('getMeetingRecordings', {
      params: { meetingId },
    });
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw ZoomApiError.badResponse('The meeting platform sent a recording that is not an object');
    }
    return body;
  }

  /**
   * Opens a recording file's `download_url` with the token and hands back the byte stream
   * unread. The token goes only to the platform's own hosts; a redirect to its storage host
   * is followed without it (cross-origin, as browsers do).
   */
  async download(downloadUrl: string): Promise<ZoomDownload> {
    const res = await this.withToken((token) =>
      this.followRedirects(
        this.platformUrl(downloadUrl, [token.apiBaseUrl]),
        (target, start): Record<string, string> =>
          target.origin === start.origin ? { authorization: `Bearer ${token.accessToken}` } : {},
      ),
    );
    return this.opened(res);
  }

  /**
   * Opens a `download_url` with the `download_token` of the recording event instead of the
   * server-to-server token (an event-only deployment): as `?access_token=` on the platform's
   * own hosts only, as the platform documents it.
   */
  async downloadWithEventToken(downloadUrl: string, downloadToken: string): Promise<ZoomDownload> {
    const start = this.platformUrl(downloadUrl, []);
    start.searchParams.set('access_token', downloadToken);
    return this.opened(await this.followRedirects(start, () => ({})));
  }

  private async opened(res: ZoomHttpResponse): Promise<ZoomDownload> {
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const body = await this.http.readJson(res, true);
      throw ZoomApiError.fromResponse(res.statusCode, res.headers, body);
    }
    const headers: ZoomDownload['headers'] = {};
    for (const name of DOWNLOAD_HEADERS) {
      const value = single(res.headers[name]);
      if (value !== undefined) headers[name] = value;
    }
    return { headers, body: res.body };
  }

  private async withToken(
    send: (token: ZoomToken) => Promise<ZoomHttpResponse>,
  ): Promise<ZoomHttpResponse> {
    if (!this.configured) throw ZoomApiError.notConfigured(this.missingCredentials);
    const token = await this.tokens.get();
    const first = await send(token);
    if (first.statusCode !== 401) return first;
    await this.http.discard(first);
    this.tokens.invalidate(token);
    this.logger.log('the platform refused the access token: renewing it and retrying once');
    return send(await this.tokens.get());
  }

  private async followRedirects(
    start: URL,
    headersFor: (target: URL, start: URL) => Record<string, string>,
  ): Promise<ZoomHttpResponse> {
    let target = start;
    for (let hop = 0; ; hop++) {
      const res = await this.http.send(target.href, {
        method: 'GET',
        headers: headersFor(target, start),
      });
      const location = single(res.headers.location);
      if (res.statusCode < 300 || res.statusCode >= 400 || !location) return res;
      await this.http.discard(res);
      if (hop >= MAX_REDIRECTS) {
        throw ZoomApiError.badResponse(
          `The recording download redirected more than ${MAX_REDIRECTS} times`,
        );
      }
      target = this.redirectTarget(location, target);
    }
  }

  private redirectTarget(location: string, from: URL): URL {
    const next = parseUrl(location, from);
    if (!next || (next.protocol !== 'https:' && next.protocol !== 'http:')) {
      throw ZoomApiError.badResponse('The recording download redirected to an invalid location');
    }
    return next;
  }

  /**
   * A token must not leave the platform: a download_url is accepted only on a configured
   * platform host (or a subdomain of one, e.g. us06web.zoom.us under zoom.us), with the same
   * scheme and port.
   */
  private platformUrl(value: string, moreBases: string[]): URL {
    const url = parseUrl(value);
    const onPlatform = (base: URL) =>
      url !== null &&
      url.protocol === base.protocol &&
      url.port === base.port &&
      (url.hostname === base.hostname || url.hostname.endsWith(`.${base.hostname}`));
    const bases = [this.config.zoom.oauthUrl, this.config.zoom.apiUrl, ...moreBases];
    if (!url || !bases.some((base) => onPlatform(new URL(base)))) {
      throw ZoomApiError.badResponse('The recording download_url is not on the meeting platform');
    }
    return url;
  }
}
