import type { Destination } from '../../webhooks/destination';

/** One attempt's message as every destination sends it: the same bytes and headers. */
export interface OutgoingMessage {
  deliveryId: string;
  event: string;
  attempt: number;
  /** The exact body bytes; every attempt of a delivery sends the same ones. */
  body: Buffer;
  /**
   * The webhook's custom headers, then the headers of SPEC §4 and §10 for this attempt (a
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
}

/**
 * One kind of destination (SPEC §14). `send` never throws: every outcome is a result to record.
 * It gives up when `signal` aborts (the attempt's one deadline, DELIVERY_TIMEOUT_MS), saying
 * what it was waiting for.
 */
export interface DestinationTransport<D extends Destination = Destination> {
  send(
    destination: D,
    target: { url: string | null },
    message: OutgoingMessage,
    signal: AbortSignal,
  ): Promise<TransportResult>;
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
 * Rejects when `signal` aborts; the work itself goes on, but nobody waits for it any more. Not
 * withTimeout: the attempt has one deadline, shared by every step, and a timer of a step's own
 * would start a second one.
 */
export function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/** A failed result with no answer. */
export const failed = (error: string): TransportResult => ({
  ok: false,
  statusCode: null,
  error,
  responseBody: null,
});
