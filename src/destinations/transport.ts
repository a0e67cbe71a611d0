/** One attempt's message as every destination sends it: the same bytes and headers. */
export interface OutgoingMessage {
  deliveryId: string;
  event: string;
  attempt: number;
  /** The exact body bytes; every attempt of a delivery sends the same ones. */
  body: Buffer;
  /**
   * The webhook's custom headers, then the headers of docs/api.md#notifications and docs/receiving.md for this attempt (a
   * custom header never replaces one of those): HTTP headers, or a message's headers.
   */
  headers: Record<string, string>;
}

/** What a destination answered; DeliverySenderService adds the timing. */
export interface TransportResult {
  ok: boolean;
  /** The HTTP status; null for a broker (and when there was no answer). */
  statusCode: number | null;
  /** Why the attempt failed (for a broker, the broker's answer); null when it succeeded. */
  error: string | null;
  /** The start of an HTTP answer; null for a broker. */
  responseBody: string | null;
  retryAfter?: string | null;
  /**
   * The receiver said the webhook is gone for good (a 410, or a chat tool's own way of saying
   * it): the webhook is disabled as for a 410 (docs/api.md#receiver-health).
   */
  gone?: boolean;
}

/**
 * One attempt's deadline (DELIVERY_TIMEOUT_MS), shared by every step of it: the URL check, the
 * connection, the request, a broker's confirm. Each step waits for it with a timer set to the
 * time left (beforeDeadline), not with an AbortSignal: a signal with listeners cost an HTTP
 * delivery more than the rest of its client (figures in docs/benchmarks.md).
 */
export class Deadline {
  /** A step's timer fired: a timer's clock and Date.now() may differ by a tick. */
  private expired = false;

  constructor(
    readonly ms: number,
    /** When it passes, ms since the epoch. */
    readonly at: number = Date.now() + ms,
  ) {}

  /** Time left, never below 0. */
  remainingMs(): number {
    return Math.max(0, this.at - Date.now());
  }

  /** Whether it has passed. */
  get passed(): boolean {
    return this.expired || Date.now() >= this.at;
  }

  /** Called by the timer of a step that waited for it. */
  expire(): void {
    this.expired = true;
  }
}

const ERROR_MAX_CHARS = 500;

/** An error as one line for the delivery log. */
export function describeError(error: unknown): string {
  const err = error as { message?: string; code?: string; cause?: { message?: string } };
  let text = err?.message || String(error);
  if (err?.code && !text.includes(err.code)) text = `${err.code}: ${text}`;
  if (err?.cause?.message && !text.includes(err.cause.message)) text += ` (${err.cause.message})`;
  return text.slice(0, ERROR_MAX_CHARS);
}

/**
 * Rejects once `deadline` passes; the work itself goes on, but nobody waits for it any more.
 * Not withTimeout: the attempt has one deadline, shared by every step, and a timer of a step's
 * own would start a second one.
 */
export function beforeDeadline<T>(work: Promise<T>, deadline: Deadline): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      deadline.expire();
      reject(new Error('deadline passed'));
    }, deadline.remainingMs());
  });
  return Promise.race([work, passed]).finally(() => clearTimeout(timer));
}

/** A failed result with no answer. */
export const failed = (error: string): TransportResult => ({
  ok: false,
  statusCode: null,
  error,
  responseBody: null,
});
