import {
  ADDRESS_FAILURE_BUDGET,
  AuthFailureLimiter,
  FAILURE_WINDOW_MS,
  MAX_FAILURES,
  MAX_TRACKED_CALLERS,
  addressOf,
} from './auth-failure-limiter';

describe('AuthFailureLimiter', () => {
  let limiter: AuthFailureLimiter;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
    limiter = new AuthFailureLimiter();
  });
  afterEach(() => jest.useRealTimers());

  const A = '192.0.2.1';
  const fail = (clientId: string, ip: string, times: number) => {
    for (let i = 0; i < times; i++) limiter.recordFailure(clientId, ip);
  };
  /** What ClientCredentialsService does with a wrong secret: check, then count the failure. */
  const attempt = (clientId: string, ip: string): 'tried' | 'blocked' => {
    if (limiter.retryAfterSeconds(clientId, ip) > 0) return 'blocked';
    limiter.recordFailure(clientId, ip);
    return 'tried';
  };

  describe('per client id and address', () => {
    it('lets a caller fail MAX_FAILURES - 1 times and blocks it at MAX_FAILURES', () => {
      fail('beta', A, MAX_FAILURES - 1);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(0);
      limiter.recordFailure('beta', A);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(FAILURE_WINDOW_MS / 1000);
      expect(() => limiter.assertMayTry('beta', A)).toThrow(
        'Too many failed authentication attempts; retry after 60 s',
      );
    });

    it('counts each client id and each address apart', () => {
      fail('beta', A, MAX_FAILURES);
      expect(limiter.retryAfterSeconds('alpha', A)).toBe(0);
      expect(limiter.retryAfterSeconds('beta', '192.0.2.2')).toBe(0);
    });

    it('slides: the block ends when the oldest counted failure leaves the window', () => {
      limiter.recordFailure('beta', A);
      jest.advanceTimersByTime(30_000);
      fail('beta', A, MAX_FAILURES - 1);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(30);
      jest.advanceTimersByTime(29_500);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(1);
      jest.advanceTimersByTime(500);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(0);
      // The other nine are still in the window: one more failure blocks again.
      limiter.recordFailure('beta', A);
      expect(limiter.retryAfterSeconds('beta', A)).toBeGreaterThan(0);
    });

    it('forgets callers whose failures have all expired', () => {
      fail('beta', A, 3);
      jest.advanceTimersByTime(FAILURE_WINDOW_MS + 1);
      limiter.recordFailure('alpha', A);
      expect(limiter.trackedCallers).toBe(1);
    });

    it('bounds memory by evicting the stalest caller', () => {
      for (let i = 0; i < MAX_TRACKED_CALLERS + 50; i++) {
        limiter.recordFailure('beta', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
      }
      expect(limiter.trackedCallers).toBe(MAX_TRACKED_CALLERS);
      fail('beta', A, MAX_FAILURES);
      expect(limiter.retryAfterSeconds('beta', A)).toBeGreaterThan(0);
    });
  });

  describe('per address, whatever the client ids', () => {
    it('blocks an address that spent its budget, for every client id, until its window ends', () => {
      for (let i = 0; i < ADDRESS_FAILURE_BUDGET - 1; i++) limiter.recordFailure(`junk-${i}`, A);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(0);
      limiter.recordFailure('junk-last', A);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(FAILURE_WINDOW_MS / 1000);
      expect(limiter.retryAfterSeconds('never-tried', A)).toBeGreaterThan(0);
      expect(limiter.retryAfterSeconds('beta', '192.0.2.2')).toBe(0);
      jest.advanceTimersByTime(FAILURE_WINDOW_MS);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(0);
    });

    it('answers the longer wait when both limits are spent', () => {
      for (let i = MAX_FAILURES; i < ADDRESS_FAILURE_BUDGET; i++) {
        limiter.recordFailure(`junk-${i}`, A);
      }
      jest.advanceTimersByTime(20_000);
      fail('beta', A, MAX_FAILURES);
      // The address's window opened 20 s before the caller's.
      expect(limiter.retryAfterSeconds('beta', A)).toBe(60);
      expect(limiter.retryAfterSeconds('alpha', A)).toBe(40);
      jest.advanceTimersByTime(40_000);
      expect(limiter.retryAfterSeconds('alpha', A)).toBe(0);
      expect(limiter.retryAfterSeconds('beta', A)).toBe(20);
    });

    it('is not flushed by 10,000 junk client ids from the locked-out address', () => {
      fail('beta', A, MAX_FAILURES);
      const outcomes = Array.from({ length: MAX_TRACKED_CALLERS + 1 }, (_, i) =>
        attempt(`junk-${i}`, A),
      );
      expect(outcomes.filter((o) => o === 'tried')).toHaveLength(
        ADDRESS_FAILURE_BUDGET - MAX_FAILURES,
      );
      expect(attempt('beta', A)).toBe('blocked');
    });

    it('bounds an address to its budget even when junk from other addresses evicts its lockout', () => {
      let guesses = 0;
      let flushes = 0;
      for (let round = 0; round < 10; round++) {
        while (attempt('beta', A) === 'tried') guesses++;
        // Push (beta, A) out of the per-caller table from addresses the attacker also holds.
        for (let i = 0; i <= MAX_TRACKED_CALLERS; i++) {
          limiter.recordFailure('junk', `10.${round}.${(i >> 8) & 255}.${i & 255}`);
        }
        flushes++;
      }
      expect(flushes).toBe(10);
      // The flushes did win guesses back (more than one lockout's worth), but no more than
      // the budget; the junk's cells may overlap A's in a row, which only lowers the count.
      expect(guesses).toBeGreaterThan(2 * MAX_FAILURES);
      expect(guesses).toBeLessThanOrEqual(ADDRESS_FAILURE_BUDGET);
    });
  });

  describe('addressOf', () => {
    it.each([
      ['an IPv4 address as it is', '192.0.2.1', '192.0.2.1'],
      ['an IPv4-mapped IPv6 address as its IPv4 address', '::ffff:192.0.2.1', '192.0.2.1'],
      ['an IPv6 address as its /64', '2001:db8:0:7:abcd::1', '2001:db8:0:7::/64'],
      ['something not an address as it is', 'unknown', 'unknown'],
    ])('counts %s', (_, ip, expected) => {
      expect(addressOf(ip)).toBe(expected);
    });

    it('makes the addresses of one IPv6 /64 share a budget', () => {
      for (let i = 0; i < ADDRESS_FAILURE_BUDGET; i++) {
        limiter.recordFailure(`junk-${i}`, `2001:db8::${i.toString(16)}`);
      }
      expect(limiter.retryAfterSeconds('beta', '2001:db8::ffff')).toBeGreaterThan(0);
      expect(limiter.retryAfterSeconds('beta', '2001:db8:0:1::1')).toBe(0);
    });
  });
});
