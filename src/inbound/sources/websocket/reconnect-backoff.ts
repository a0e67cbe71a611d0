/** First and largest wait before opening the platform's socket again (docs/inbound-sources.md). */
export const RECONNECT_MIN_MS = 1_000;
export const RECONNECT_MAX_MS = 60_000;

/**
 * The wait before reconnection number `failures` (1 after the first failure): doubling from
 * 1 s up to 60 s, each drawn between half and all of it ("equal jitter"), so replicas and
 * restarts do not reconnect in step, and never under 1 s.
 */
export function reconnectDelayMs(failures: number, random = Math.random): number {
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** Math.max(0, failures - 1));
  return Math.max(RECONNECT_MIN_MS, Math.round(ceiling / 2 + (ceiling / 2) * random()));
}
