import { RECONNECT_MAX_MS, RECONNECT_MIN_MS, reconnectDelayMs } from './reconnect-backoff';

describe('reconnectDelayMs', () => {
  it('starts at 1 s and doubles up to 60 s, never below half the step', () => {
    expect(reconnectDelayMs(1, () => 0)).toBe(RECONNECT_MIN_MS);
    expect(reconnectDelayMs(1, () => 1)).toBe(RECONNECT_MIN_MS);
    expect(reconnectDelayMs(3, () => 1)).toBe(4_000);
    expect(reconnectDelayMs(3, () => 0)).toBe(2_000);
    expect(reconnectDelayMs(7, () => 1)).toBe(RECONNECT_MAX_MS);
    expect(reconnectDelayMs(50, () => 1)).toBe(RECONNECT_MAX_MS);
    expect(reconnectDelayMs(50, () => 0)).toBe(RECONNECT_MAX_MS / 2);
  });

  it('spreads replicas apart with jitter', () => {
    const draws = new Set(Array.from({ length: 20 }, () => reconnectDelayMs(6)));
    expect(draws.size).toBeGreaterThan(1);
  });
});
