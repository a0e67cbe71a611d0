/** docs/api.md#receiver-health: at most this many test deliveries per webhook in any window of WINDOW_MS. */
export const TESTS_PER_WINDOW = 10;
export const TEST_WINDOW_MS = 60_000;

/**
 * Seconds until another test may be sent, given the creation times of the webhook's tests in
 * the last window (newest first, at most TESTS_PER_WINDOW); 0 when one may be sent now. A slot
 * frees when the oldest of the last TESTS_PER_WINDOW tests leaves the window.
 */
export function testRetryAfterSeconds(recent: Date[], now = Date.now()): number {
  if (recent.length < TESTS_PER_WINDOW) return 0;
  const oldest = recent[TESTS_PER_WINDOW - 1].getTime();
  return Math.max(1, Math.ceil((oldest + TEST_WINDOW_MS - now) / 1000));
}
