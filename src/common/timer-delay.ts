/**
 * The longest delay setTimeout and setInterval hold (2^31 − 1 ms, about 24.8 days). Node
 * replaces a longer one with 1 ms and warns, so a delay taken from a platform value (a token's
 * `expires_in`, a `Retry-After`) past it would fire at once, again and again.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay setTimeout keeps as it is: within 0 and MAX_TIMER_MS. NaN (a value that was no
 * number) is 0, as setTimeout itself reads it; Infinity is the longest.
 */
export function timerDelayMs(ms: number): number {
  if (Number.isNaN(ms)) return 0;
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}
