import { MAX_TIMER_MS, timerDelayMs } from './timer-delay';

describe('timerDelayMs', () => {
  it('keeps a delay the runtime holds, and bounds the rest to what it holds', () => {
    expect(timerDelayMs(1500)).toBe(1500);
    expect(timerDelayMs(-5)).toBe(0);
    expect(timerDelayMs(Number.NaN)).toBe(0);
    // expires_in 3e6 s, Retry-After of a year: past 2^31 − 1, setTimeout would fire in 1 ms.
    expect(timerDelayMs(3e9)).toBe(MAX_TIMER_MS);
    expect(timerDelayMs(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_MS);
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
  });
});
