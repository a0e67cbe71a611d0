import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { ErrorDetail, UpstreamError } from '../common/error-response';

/** Which way a platform call failed: the platform's own answer, the network, or this side. */
export type ZoomFailure =
  'upstream' | 'unreachable' | 'timeout' | 'not_configured' | 'bad_response';

/** The platform's headers passed on with every answer, success or error (docs/api.md#platform-passthrough). */
const PLATFORM_HEADERS = [
  'x-zm-trackingid',
  'x-ratelimit-category',
  'x-ratelimit-type',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
];

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

const header = (headers: UpstreamHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * `Retry-After` as whole seconds. The platform sends either seconds or an HTTP date; a date is
 * measured against the response's own `Date` header when it has one, so clock skew between
 * the platform and this host does not matter.
 */
export function retryAfterSeconds(
  value: string | undefined,
  responseDate: string | undefined,
  now = Date.now(),
): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return text;
  // HTTP dates name their month ("Wed, 21 Oct 2015 07:28:00 GMT"); Date.parse alone would
  // also read "-5" as a year.
  const at = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at)) return undefined;
  const base = responseDate ? Date.parse(responseDate) : NaN;
  const from = Number.isNaN(base) ? now : base;
  return String(Math.max(0, Math.ceil((at - from) / 1000)));
}

const SECONDS_PER_DAY = 24 * 60 * 60;

/**
 * A `Retry-After` for a 429 that came without a usable one (docs/api.md#platform-passthrough: "as received, or
 * computed"), from what the platform says about the limit it hit. A daily cap is lifted at
 * 00:00 UTC, so the wait runs to then (on the platform's clock when the response has a `Date`);
 * otherwise the Resource-intensive category is limited per minute and the others per second,
 * so one window of that length is enough. Without any rate-limit headers, the per-second wait.
 */
export function computedRetryAfter(
  type: string | undefined,
  category: string | undefined,
  responseDate: string | undefined,
  now = Date.now(),
): string {
  if (type !== undefined && /daily/i.test(type)) {
    const base = responseDate ? Date.parse(responseDate) : NaN;
    const from = Math.floor((Number.isNaN(base) ? now : base) / 1000);
    return String(SECONDS_PER_DAY - (from % SECONDS_PER_DAY));
  }
  return category !== undefined && /resource/i.test(category) ? '60' : '1';
}

/** The platform's tracking id and rate-limit headers of an answer, to pass on. */
export function platformHeaders(headers: UpstreamHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of PLATFORM_HEADERS) {
    const value = header(headers, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function upstreamHeaders(headers: UpstreamHeaders, status: number): Record<string, string> {
  const out = platformHeaders(headers);
  const date = header(headers, 'date');
  const retryAfter =
    retryAfterSeconds(header(headers, 'retry-after'), date) ??
    (status === HttpStatus.TOO_MANY_REQUESTS
      ? computedRetryAfter(out['x-ratelimit-type'], out['x-ratelimit-category'], date)
      : undefined);
  if (retryAfter !== undefined) out['retry-after'] = retryAfter;
  return out;
}

interface PlatformErrorBody {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
  /** The token endpoint's RFC 6749-style fields. */
  error?: unknown;
  reason?: unknown;
}

function detailsOf(errors: unknown): ErrorDetail[] | undefined {
  if (!Array.isArray(errors)) return undefined;
  const details = errors
    .filter(
      (e): e is { field: string; message: string } =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as { field?: unknown }).field === 'string' &&
        typeof (e as { message?: unknown }).message === 'string',
    )
    .map((e) => ({ field: e.field, message: e.message }));
  return details.length > 0 ? details : undefined;
}

/** An error from a platform call, already in the docs/api.md#errors shape it is answered with. */
export class ZoomApiError extends ApiError {
  constructor(
    status: number,
    message: string,
    readonly failure: ZoomFailure,
    extra: ApiError['extra'] = {},
  ) {
    super(status, message, extra);
  }

  static notConfigured(missing: string[]): ZoomApiError {
    return new ZoomApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      `The meeting platform is not configured: set ${missing.join(', ')}`,
      'not_configured',
    );
  }

  static timeout(timeoutMs: number): ZoomApiError {
    return new ZoomApiError(
      HttpStatus.GATEWAY_TIMEOUT,
      `The meeting platform did not answer within ${timeoutMs} ms`,
      'timeout',
    );
  }

  static unreachable(reason: string): ZoomApiError {
    return new ZoomApiError(
      HttpStatus.BAD_GATEWAY,
      `The meeting platform could not be reached (${reason})`,
      'unreachable',
    );
  }

  static badResponse(message: string): ZoomApiError {
    return new ZoomApiError(HttpStatus.BAD_GATEWAY, message, 'bad_response');
  }

  /**
   * Passes a platform error answer on: same status, the platform's code and message in
   * `upstream`, its field errors in `details`, and `Retry-After` (computed for a 429 that has
   * none) and the rate-limit headers.
   * Two statuses are not passed as they are: a 401 that survived a token renewal means the
   * platform refuses this service (502, since a 401 would tell the caller that *their* token
   * is bad), and a redirect from a JSON endpoint is not an answer (502).
   */
  static fromResponse(
    status: number,
    headers: UpstreamHeaders,
    body: unknown,
    context: 'api' | 'token' = 'api',
  ): ZoomApiError {
    const parsed: PlatformErrorBody = typeof body === 'object' && body !== null ? body : {};
    const code = parsed.code ?? parsed.error;
    const text = parsed.message ?? parsed.reason;
    // docs/api.md: `code` is a number. The token endpoint's codes are words (RFC 6749's
    // `invalid_client`); such a word leads the message instead, so nothing it said is lost.
    const numeric =
      typeof code === 'number'
        ? code
        : typeof code === 'string' && /^\d+$/.test(code)
          ? Number(code)
          : null;
    const word = typeof code === 'string' && numeric === null ? code : undefined;
    const message = typeof text === 'string' ? text : undefined;
    const upstream: UpstreamError = {
      status,
      code: numeric,
      message: word && message ? `${word}: ${message}` : (message ?? word ?? null),
    };
    const extra = {
      upstream,
      headers: upstreamHeaders(headers, status),
      details: detailsOf(parsed.errors),
    };
    if (status === HttpStatus.TOO_MANY_REQUESTS) {
      return new ZoomApiError(
        status,
        upstream.message ?? 'Rate limited by the meeting platform',
        'upstream',
        extra,
      );
    }
    if (context === 'token') {
      const refused = status >= 400 && status < 500;
      return new ZoomApiError(
        HttpStatus.BAD_GATEWAY,
        refused
          ? `The meeting platform refused the server-to-server credentials (${status}: ${upstream.message ?? 'no reason given'})`
          : `The meeting platform's token endpoint answered ${status}`,
        'upstream',
        extra,
      );
    }
    if (status === HttpStatus.UNAUTHORIZED) {
      return new ZoomApiError(
        HttpStatus.BAD_GATEWAY,
        'The meeting platform refused a freshly issued access token',
        'upstream',
        extra,
      );
    }
    if (status < 400 || status > 599) {
      return new ZoomApiError(
        HttpStatus.BAD_GATEWAY,
        `The meeting platform answered with unexpected status ${status}`,
        'bad_response',
        extra,
      );
    }
    return new ZoomApiError(
      status,
      upstream.message ?? `The meeting platform answered ${status}`,
      'upstream',
      extra,
    );
  }
}
