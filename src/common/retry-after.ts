/** The longest a receiver's Retry-After may push a retry back (docs/api.md#receiver-health). */
export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;

/** Statuses whose Retry-After is honoured. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * How long a receiver asked us to wait, in ms (RFC 9110 §10.2.3: delay-seconds or an HTTP
 * date), capped at one hour; null when the status does not carry one or the value is not
 * one of the two forms.
 */
export function retryAfterMs(
  statusCode: number | null,
  header: string | null | undefined,
  now = Date.now(),
): number | null {
  if (statusCode === null || !RETRY_AFTER_STATUSES.has(statusCode) || !header) return null;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    // An HTTP date names its month (Date.parse would also take "-5" as a year).
    const at = /[a-z]/i.test(value) ? Date.parse(value) : NaN;
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, RETRY_AFTER_CAP_MS);
}
