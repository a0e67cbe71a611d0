import {
  AuthFailureLimiter,
  FAILURE_WINDOW_MS,
  MAX_FAILURES,
  MAX_TRACKED_CALLERS,
} from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  let limiter: AuthFailureLimiter;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    limiter = new AuthFailureLimiter();
  });
  afterEach(() => jest.useRealTimers());

  const fail = (key: string, times: number) => {
    for (let i = 0; i < times; i++) limiter.recordFailure(key);
  };

  it('lets a caller fail MAX_FAILURES - 1 times and blocks it at MAX_FAILURES', () => {
    fail('a', MAX_FAILURES - 1);
    expect(limiter.retryAfterSeconds('a')).toBe(0);
    limiter.recordFailure('a');
    expect(limiter.retryAfterSeconds('a')).toBe(FAILURE_WINDOW_MS / 1000);
  });

  it('counts each caller apart', () => {
    fail('a', MAX_FAILURES);
    expect(limiter.retryAfterSeconds('b')).toBe(0);
  });

  it('slides: the block ends when the oldest counted failure leaves the window', () => {
    limiter.recordFailure('a');
    jest.advanceTimersByTime(30_000);
    fail('a', MAX_FAILURES - 1);
    expect(limiter.retryAfterSeconds('a')).toBe(30);
    jest.advanceTimersByTime(29_500);
    expect(limiter.retryAfterSeconds('a')).toBe(1);
    jest.advanceTimersByTime(500);
    expect(limiter.retryAfterSeconds('a')).toBe(0);
    // The other nine are still in the window: one more failure blocks again.
    limiter.recordFailure('a');
    expect(limiter.retryAfterSeconds('a')).toBeGreaterThan(0);
  });

  it('forgets callers whose failures have all expired', () => {
    fail('a', 3);
    jest.advanceTimersByTime(FAILURE_WINDOW_MS + 1);
    limiter.recordFailure('b');
    expect(limiter.trackedCallers).toBe(1);
  });

  it('bounds memory by evicting the stalest caller', () => {
    for (let i = 0; i < MAX_TRACKED_CALLERS + 50; i++) limiter.recordFailure(`k${i}`);
    expect(limiter.trackedCallers).toBe(MAX_TRACKED_CALLERS);
    fail('recent', MAX_FAILURES);
    expect(limiter.retryAfterSeconds('recent')).toBeGreaterThan(0);
  });
});
