import { TESTS_PER_WINDOW, testRetryAfterSeconds } from './test-rate';

describe('testRetryAfterSeconds', () => {
  const now = Date.parse('2026-01-01T10:00:00Z');
  const agoMs = (ms: number) => new Date(now - ms);

  it('lets a test through while fewer than ten were sent in the last minute', () => {
    expect(testRetryAfterSeconds([], now)).toBe(0);
    const nine = Array.from({ length: TESTS_PER_WINDOW - 1 }, (_, i) => agoMs(i * 1000));
    expect(testRetryAfterSeconds(nine, now)).toBe(0);
  });

  it('says how long until the oldest of the last ten leaves the window, rounded up', () => {
    // Newest first: the tenth was sent 45.5 s ago, so a slot frees in 14.5 s.
    const ten = Array.from({ length: TESTS_PER_WINDOW }, (_, i) => agoMs(i * 5000 + 500));
    expect(testRetryAfterSeconds(ten, now)).toBe(15);
  });

  it('never answers less than one second while the window is full', () => {
    const ten = Array.from({ length: TESTS_PER_WINDOW }, () => agoMs(59_999));
    expect(testRetryAfterSeconds(ten, now)).toBe(1);
  });
});
