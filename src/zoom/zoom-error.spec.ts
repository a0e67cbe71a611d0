import { ZoomApiError, computedRetryAfter, retryAfterSeconds } from './zoom-error';

describe('retryAfterSeconds', () => {
  const now = Date.parse('2025-01-01T10:00:00Z');

  it('passes seconds on as they are', () => {
    expect(retryAfterSeconds('7', undefined, now)).toBe('7');
    expect(retryAfterSeconds(' 120 ', undefined, now)).toBe('120');
  });

  it('turns an HTTP date into seconds from the response Date header', () => {
    const responseDate = 'Wed, 01 Jan 2025 09:00:00 GMT'; // the platform's clock is an hour behind
    expect(retryAfterSeconds('Wed, 01 Jan 2025 09:00:30 GMT', responseDate, now)).toBe('30');
  });

  it('uses the local clock when the response has no Date, and never goes negative', () => {
    expect(retryAfterSeconds('Wed, 01 Jan 2025 10:01:00 GMT', undefined, now)).toBe('60');
    expect(retryAfterSeconds('Wed, 01 Jan 2025 09:59:00 GMT', undefined, now)).toBe('0');
    expect(retryAfterSeconds('Wed, 01 Jan 2025 10:00:00 GMT', 'not a date', now)).toBe('0');
  });

  it('drops a missing or unreadable value', () => {
    expect(retryAfterSeconds(undefined, undefined, now)).toBeUndefined();
    expect(retryAfterSeconds('', undefined, now)).toBeUndefined();
    expect(retryAfterSeconds('soon', undefined, now)).toBeUndefined();
    expect(retryAfterSeconds('-5', undefined, now)).toBeUndefined();
  });
});

describe('computedRetryAfter', () => {
  const now = Date.parse('2025-01-01T10:00:00Z');
  const untilMidnight = String(14 * 60 * 60);

  it('waits for 00:00 UTC when a daily cap was hit, on the platform clock when it sent a Date', () => {
    expect(computedRetryAfter('Daily-limit', 'Heavy', undefined, now)).toBe(untilMidnight);
    expect(computedRetryAfter('daily', undefined, undefined, now)).toBe(untilMidnight);
    expect(computedRetryAfter('Daily-limit', 'Light', 'Wed, 01 Jan 2025 23:59:30 GMT', now)).toBe(
      '30',
    );
    expect(computedRetryAfter('Daily-limit', 'Light', 'not a date', now)).toBe(untilMidnight);
    expect(
      computedRetryAfter('Daily-limit', 'Light', undefined, Date.parse('2025-01-01T00:00:00Z')),
    ).toBe(String(24 * 60 * 60));
  });

  it('waits one minute for the per-minute Resource-intensive category', () => {
    expect(computedRetryAfter('QPS', 'Resource-intensive', undefined, now)).toBe('60');
    expect(computedRetryAfter(undefined, 'Resource-Intensive', undefined, now)).toBe('60');
  });

  it('waits one second for the per-second categories, or when nothing says which limit', () => {
    for (const category of ['Light', 'Medium', 'Heavy', undefined]) {
      expect(computedRetryAfter('QPS', category, undefined, now)).toBe('1');
    }
    expect(computedRetryAfter(undefined, undefined, undefined, now)).toBe('1');
  });
});

describe('ZoomApiError.fromResponse', () => {
  it('passes status, code and message on, with field errors as details', () => {
    const error = ZoomApiError.fromResponse(
      400,
      {},
      {
        code: 300,
        message: 'Validation Failed.',
        errors: [{ field: 'topic', message: 'Too long.' }, { nonsense: true }],
      },
    );
    expect(error.getStatus()).toBe(400);
    expect(error.message).toBe('Validation Failed.');
    expect(error.extra.upstream).toEqual({ status: 400, code: 300, message: 'Validation Failed.' });
    expect(error.extra.details).toEqual([{ field: 'topic', message: 'Too long.' }]);
  });

  it('keeps Retry-After and the rate-limit headers of a 429', () => {
    const error = ZoomApiError.fromResponse(
      429,
      {
        'retry-after': '3',
        'x-ratelimit-category': 'Heavy',
        'x-ratelimit-type': 'QPS',
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-other': 'dropped',
      },
      { code: 429, message: 'Too many requests.' },
    );
    expect(error.getStatus()).toBe(429);
    expect(error.extra.headers).toEqual({
      'retry-after': '3',
      'x-ratelimit-category': 'Heavy',
      'x-ratelimit-type': 'QPS',
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
    });
  });

  it('computes Retry-After for a 429 that has none (or an unreadable one), and only for a 429', () => {
    const limited = (headers: Record<string, string>) =>
      ZoomApiError.fromResponse(429, headers, undefined).extra.headers?.['retry-after'];
    expect(limited({ 'x-ratelimit-category': 'Medium', 'x-ratelimit-type': 'QPS' })).toBe('1');
    expect(limited({ 'x-ratelimit-category': 'Resource-intensive', 'retry-after': 'soon' })).toBe(
      '60',
    );
    expect(
      limited({ 'x-ratelimit-type': 'Daily-limit', date: 'Wed, 01 Jan 2025 23:00:00 GMT' }),
    ).toBe('3600');
    expect(ZoomApiError.fromResponse(503, {}, undefined).extra.headers).toEqual({});
  });

  it('answers 502 for a 401 that survived the renewal, keeping the platform code', () => {
    const error = ZoomApiError.fromResponse(
      401,
      {},
      { code: 124, message: 'Invalid access token.' },
    );
    expect(error.getStatus()).toBe(502);
    expect(error.extra.upstream).toEqual({
      status: 401,
      code: 124,
      message: 'Invalid access token.',
    });
  });

  it('answers 502 for token endpoint refusals, naming the reason', () => {
    const error = ZoomApiError.fromResponse(
      401,
      {},
      { reason: 'Invalid client_id or client_secret', error: 'invalid_client' },
      'token',
    );
    expect(error.getStatus()).toBe(502);
    expect(error.message).toBe(
      'The meeting platform refused the server-to-server credentials (401: invalid_client: Invalid client_id or client_secret)',
    );
    // docs/api.md: upstream.code is a number; the word code leads the message instead.
    expect(error.extra.upstream?.code).toBeNull();
    expect(error.extra.upstream?.message).toBe(
      'invalid_client: Invalid client_id or client_secret',
    );
  });

  it('copes with a body that is not the platform error shape', () => {
    const error = ZoomApiError.fromResponse(503, {}, undefined);
    expect(error.getStatus()).toBe(503);
    expect(error.message).toBe('The meeting platform answered 503');
    expect(error.extra.upstream).toEqual({ status: 503, code: null, message: null });
  });

  it('treats a redirect from a JSON endpoint as a bad answer', () => {
    expect(ZoomApiError.fromResponse(302, {}, undefined).getStatus()).toBe(502);
  });
});

describe('ZoomApiError kinds', () => {
  it('answers 504 for a timeout, 502 for an unreachable platform and 503 when unconfigured', () => {
    expect(ZoomApiError.timeout(100)).toMatchObject({ failure: 'timeout' });
    expect(ZoomApiError.timeout(100).getStatus()).toBe(504);
    expect(ZoomApiError.unreachable('ECONNREFUSED').getStatus()).toBe(502);
    expect(ZoomApiError.unreachable('ECONNREFUSED').message).toContain('ECONNREFUSED');
    expect(ZoomApiError.notConfigured(['ZOOM_CLIENT_ID']).getStatus()).toBe(503);
    expect(ZoomApiError.notConfigured(['ZOOM_CLIENT_ID']).message).toContain('ZOOM_CLIENT_ID');
  });
});
