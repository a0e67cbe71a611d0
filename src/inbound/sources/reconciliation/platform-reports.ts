import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '../../../common/api-error';
import { RETRY_AFTER_CAP_MS } from '../../../common/retry-after';
import { MEETING_UUID_PARAM } from '../../../meetings/meeting-path-rules';
import { ZoomApiError } from '../../../zoom/zoom-error';
import { ZoomOperation, isDotSegment } from '../../../zoom/zoom-operations';
import { ZoomClient, ZoomTokenSource } from '../../../zoom/zoom.client';
import { ReconcileRedis } from './reconcile-redis';

/** The platform's report endpoints a run reads, one name each in a run's `errors`. */
export const SOURCES = {
  meetings: { method: 'GET', path: '/metrics/meetings' },
  webinars: { method: 'GET', path: '/metrics/webinars' },
  meeting_participants: { method: 'GET', path: '/metrics/meetings/{meetingId}/participants' },
  webinar_participants: { method: 'GET', path: '/metrics/webinars/{webinarId}/participants' },
  recordings: { method: 'GET', path: '/meetings/{meetingId}/recordings' },
} as const satisfies Record<string, ZoomOperation>;
export type SourceName = keyof typeof SOURCES;

// Meeting and webinar UUIDs in these paths are encoded as passthrough encodes them (twice when
// they begin with `/` or hold `//`).
const PATH_RULES = { meetingId: MEETING_UUID_PARAM, webinarId: MEETING_UUID_PARAM };
const PAGE_SIZE = 300;
/** Attempts of one request the platform could not answer (unreachable, timeout, 5xx). */
const ATTEMPTS = 3;
const RETRY_BACKOFF_MS = 1000;
/** 429s in a row on one request before the run gives up on the platform. */
const MAX_RATE_LIMITED = 20;
// A 403, or a 400/401 that says the account's plan or the app's scopes do not allow it.
const REFUSAL_MESSAGE =
  /scope|plan|permission|not allowed|not authori[sz]ed|access|feature|upgrade/i;

/** The credentials may not read this source: recorded and skipped, the run ends `partial`. */
export class SourceRefused extends Error {
  constructor(
    readonly source: SourceName,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The platform could not be reached (or kept failing): the run ends `failed`. */
export class PlatformUnreachable extends Error {
  constructor(
    readonly source: SourceName,
    readonly status: number | null,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One answer or listing that cannot be trusted (docs/reconciliation.md#reports-it-cannot-trust):
 * a 404, a `next_page_token` seen before, too many pages, an answer too big or not JSON, a uuid
 * that cannot be put in a path. Recorded in the run's `errors` (it ends `partial`); that listing
 * ends there, and the source is still read for other meetings.
 */
export class SourceUntrusted extends Error {
  constructor(
    readonly source: SourceName,
    readonly status: number | null,
    message: string,
  ) {
    super(message);
  }
}

/** Most pages one listing may have (300 rows each: 300,000 rows) before it is not believed. */
export const MAX_PAGES = 1000;

/** Why `value` cannot be put in a path segment (isDotSegment), or null. */
export function unsafeSegment(value: string): string | null {
  return value === '' || isDotSegment(value)
    ? `${JSON.stringify(value)} cannot be put in a path`
    : null;
}

function upstreamOf(error: ZoomApiError): { status: number; message: string } {
  const upstream = error.extra.upstream;
  return {
    status: upstream?.status ?? error.getStatus(),
    message: upstream?.message ?? error.message,
  };
}

/**
 * The platform's `Retry-After`, at least 100 ms and at most an hour (RETRY_AFTER_CAP_MS, as for
 * receivers): a larger value would be a timer past what setTimeout holds, which fires at once
 * and would spend the shared rate limit in a loop.
 */
function retryAfterMs(error: ZoomApiError): number {
  const seconds = Number(error.extra.headers?.['retry-after']);
  return Number.isFinite(seconds) && seconds >= 0
    ? Math.min(Math.max(seconds * 1000, 100), RETRY_AFTER_CAP_MS)
    : 1000;
}

/** Whose reports a run reads: an installed account's tokens and budget, or the server-to-server. */
export interface ReportsAccount {
  /** The budget's key (ReconcileRedis): '' for the server-to-server account. */
  key: string;
  /** The installed account's tokens; undefined: the server-to-server token. */
  tokens?: ZoomTokenSource;
}

/**
 * Reads one account's reports under reconciliation's own request budget of that account
 * (ReconcileRedis): every request waits for a slot of RECONCILE_MAX_RPS across the deployment,
 * a 429 pauses every process's requests of that account for its `Retry-After`, and errors are
 * sorted into refused sources, missing reports and an unreachable platform.
 */
export class PlatformReports {
  /** Requests made (429s included), for the run's log line. */
  requests = 0;

  constructor(
    private readonly zoom: ZoomClient,
    private readonly budget: ReconcileRedis,
    private readonly maxRps: number,
    private readonly signal: AbortSignal,
    private readonly account: ReportsAccount = { key: '' },
  ) {}

  /**
   * Every row of every page of `list` (`meetings`, `participants`, …) of a paged report, one
   * page at a time (the caller holds one page, never the listing). A `next_page_token` seen
   * before, or more than MAX_PAGES pages, ends the listing with SourceUntrusted.
   */
  async *rows(
    source: SourceName,
    list: string,
    query: Record<string, string>,
    params: Record<string, string> = {},
  ): AsyncGenerator<Record<string, unknown>[]> {
    let token = '';
    // At most MAX_PAGES tokens, each the platform's own (short): bounded.
    const seen = new Set<string>();
    let pages = 0;
    do {
      if (++pages > MAX_PAGES)
        throw new SourceUntrusted(
          source,
          null,
          `more than ${MAX_PAGES} pages: listing not read further`,
        );
      const search = new URLSearchParams({ ...query, page_size: String(PAGE_SIZE) });
      if (token) search.set('next_page_token', token);
      const body = await this.get(source, params, search.toString());
      const rows = body[list];
      yield Array.isArray(rows)
        ? rows.filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null)
        : [];
      token = typeof body.next_page_token === 'string' ? body.next_page_token : '';
      if (token && seen.has(token))
        throw new SourceUntrusted(
          source,
          null,
          `next_page_token repeated after ${pages} pages: listing not read further`,
        );
      seen.add(token);
    } while (token);
  }

  /** One answer of `source`, as an object. */
  async get(
    source: SourceName,
    params: Record<string, string>,
    query = '',
  ): Promise<Record<string, unknown>> {
    for (const value of Object.values(params)) {
      const problem = unsafeSegment(value);
      if (problem !== null) throw new SourceUntrusted(source, null, `uuid ${problem}`);
    }
    let failures = 0;
    let limited = 0;
    for (;;) {
      await this.slot();
      this.requests++;
      try {
        const { body } = await this.zoom.call<Record<string, unknown>>(SOURCES[source], {
          params,
          pathRules: PATH_RULES,
          query,
          tokens: this.account.tokens,
        });
        return typeof body === 'object' && body !== null ? body : {};
      } catch (error) {
        // The installed account's tokens are gone (revoked, needs_reinstall): nothing to read.
        const ours = error instanceof ApiError && !(error instanceof ZoomApiError);
        if (ours && error.getStatus() === 409)
          throw new PlatformUnreachable(source, null, error.message);
        if (!(error instanceof ZoomApiError)) throw error;
        const { status, message } = upstreamOf(error);
        if (error.failure === 'not_configured')
          throw new PlatformUnreachable(source, null, error.message);
        if (status === 429 && ++limited <= MAX_RATE_LIMITED) {
          await this.budget.pause(retryAfterMs(error), this.account.key);
          continue;
        }
        if (status === 403 || ((status === 400 || status === 401) && REFUSAL_MESSAGE.test(message)))
          throw new SourceRefused(source, status, message);
        // A plan without the dashboard answers 404 for the whole source; a meeting without a
        // report (3001), for that meeting. Either is recorded, never retried.
        if (status === 404) throw new SourceUntrusted(source, status, message);
        // Over MAX_JSON_BYTES or not JSON: asking again gets the same answer.
        if (error.failure === 'bad_response')
          throw new SourceUntrusted(source, null, error.message);
        const transient = error.failure !== 'upstream' || status >= 500 || status === 429;
        if (transient && ++failures < ATTEMPTS) {
          await sleep(RETRY_BACKOFF_MS * failures, undefined, { signal: this.signal });
          continue;
        }
        if (transient) throw new PlatformUnreachable(source, status, error.message);
        throw new SourceRefused(source, status, message);
      }
    }
  }

  private async slot(): Promise<void> {
    for (;;) {
      this.signal.throwIfAborted();
      const wait = await this.budget.take(this.maxRps, this.account.key);
      if (wait === 0) return;
      await sleep(wait, undefined, { signal: this.signal });
    }
  }
}
