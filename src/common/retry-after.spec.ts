import { RETRY_AFTER_CAP_MS, retryAfterMs } from './retry-after';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T10:00:00Z');

  it('reads delay-seconds on 429 and 503', () => {
    expect(retryAfterMs(429, '120', now)).toBe(120_000);
    expect(retryAfterMs(503, ' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date as the time until it, never negative', () => {
    expect(retryAfterMs(503, 'Thu, 01 Jan 2026 10:02:30 GMT', now)).toBe(150_000);
    expect(retryAfterMs(429, 'Thu, 01 Jan 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('caps the wait at one hour', () => {
    expect(retryAfterMs(429, '86400', now)).toBe(RETRY_AFTER_CAP_MS);
    expect(retryAfterMs(503, 'Fri, 02 Jan 2026 10:00:00 GMT', now)).toBe(RETRY_AFTER_CAP_MS);
  });

  it('ignores it on other statuses, when absent, and when it is neither form', () => {
    expect(retryAfterMs(500, '120', now)).toBeNull();
    expect(retryAfterMs(null, '120', now)).toBeNull();
    expect(retryAfterMs(429, undefined, now)).toBeNull();
    expect(retryAfterMs(429, 'soon', now)).toBeNull();
    expect(retryAfterMs(429, '-5', now)).toBeNull();
  });
});
