import {
  HOUR_MS,
  exampleFor,
  generateSecret,
  lastHourStats,
  localToUtc,
  looksLikeEventId,
  parseEvents,
  shortId,
  utcToLocal,
} from './logic';
import type { Delivery, Page } from './types';

const NOW = Date.parse('2026-03-01T12:00:00Z');

function delivery(minutesAgo: number, status: Delivery['status']): Delivery {
  return {
    id: `d-${minutesAgo}`,
    webhook_id: 'w',
    event: 'job.started',
    event_id: 'e',
    status,
    attempt_count: 1,
    next_attempt_at: null,
    last_status_code: 200,
    last_error: null,
    created_at: new Date(NOW - minutesAgo * 60_000).toISOString(),
    completed_at: null,
  };
}

/** A delivery log served in pages of `size`, newest first, recording the cursors asked for. */
function log(deliveries: Delivery[], size: number) {
  const asked: (string | undefined)[] = [];
  const loadPage = async (cursor: string | undefined): Promise<Page<Delivery>> => {
    asked.push(cursor);
    const start = cursor ? Number(cursor) : 0;
    const end = start + size;
    return {
      data: deliveries.slice(start, end),
      next_cursor: end < deliveries.length ? String(end) : null,
    };
  };
  return { loadPage, asked };
}

describe('lastHourStats', () => {
  it('counts the deliveries of the last hour and the failed ones, and stops at the first older one', async () => {
    const { loadPage, asked } = log(
      [
        delivery(1, 'succeeded'),
        delivery(5, 'failed'),
        delivery(30, 'pending'),
        delivery(59, 'failed'),
        delivery(61, 'failed'),
        delivery(90, 'failed'),
        delivery(120, 'failed'),
      ],
      2,
    );
    expect(await lastHourStats(loadPage, NOW)).toEqual({ total: 4, failed: 2, more: false });
    // The third page holds the first delivery older than an hour: no fourth is read.
    expect(asked).toEqual([undefined, '2', '4']);
  });

  it('reads no further than its page budget and says the figures are lower bounds', async () => {
    const busy = Array.from({ length: 30 }, (_, i) =>
      delivery(i, i % 3 === 0 ? 'failed' : 'succeeded'),
    );
    const { loadPage, asked } = log(busy, 5);
    expect(await lastHourStats(loadPage, NOW, 3)).toEqual({ total: 15, failed: 5, more: true });
    expect(asked).toHaveLength(3);
  });

  it('is zero for a webhook with no deliveries', async () => {
    expect(await lastHourStats(log([], 100).loadPage, NOW)).toEqual({
      total: 0,
      failed: 0,
      more: false,
    });
    expect(HOUR_MS).toBe(3_600_000);
  });
});

describe('parseEvents', () => {
  it('takes commas, spaces and new lines, and drops blanks and repeats', () => {
    expect(parseEvents(' job.started,job.completed  job.started\nzoom.* ,, ')).toEqual([
      'job.started',
      'job.completed',
      'zoom.*',
    ]);
    expect(parseEvents('')).toEqual([]);
  });
});

describe('datetime-local values', () => {
  it('round-trips a moment through the local form and back to UTC with Z', () => {
    const local = utcToLocal(Date.parse('2026-03-01T10:15:00Z'));
    expect(local).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    expect(localToUtc(local)).toBe('2026-03-01T10:15:00Z');
  });

  it('leaves an empty or broken value out', () => {
    expect(localToUtc('')).toBeUndefined();
    expect(localToUtc('not a date')).toBeUndefined();
  });
});

describe('generateSecret', () => {
  it('makes a Standard Webhooks secret of 24 random bytes', () => {
    const secret = generateSecret((bytes) => bytes.fill(7));
    expect(secret).toBe(`whsec_${Buffer.alloc(24, 7).toString('base64')}`);
    expect(secret.length).toBeGreaterThanOrEqual(16);
  });
});

describe('shortId', () => {
  it('tells apart ids made in the same millisecond (UUIDv7: the time comes first)', () => {
    const a = '019ac4b2-1f00-7a3c-8d2e-5b6c7d8e9f01';
    const b = '019ac4b2-1f00-7f11-9a0b-c1d2e3f4a5b6';
    expect(shortId(a)).not.toBe(shortId(b));
    expect(shortId(a)).toBe('…5b6c7d8e9f01');
  });
});

describe('looksLikeEventId', () => {
  it('tells an event id (UUID) from a platform tracking id', () => {
    expect(looksLikeEventId(' 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d ')).toBe(true);
    expect(looksLikeEventId('v=2.0;clid=aw1;rid=WEB_abc')).toBe(false);
  });
});

describe('exampleFor', () => {
  it('builds a body from a schema: const, enum, formats, nullable types, arrays and nesting', () => {
    expect(
      exampleFor({
        type: 'object',
        properties: {
          event: { const: 'job.started' },
          status: { enum: ['a', 'b'] },
          at: { type: 'string', format: 'date-time' },
          id: { type: ['string', 'null'] },
          count: { type: 'integer', minimum: 1 },
          ok: { type: 'boolean' },
          files: {
            type: 'array',
            items: { type: 'object', properties: { url: { type: 'string', format: 'uri' } } },
          },
        },
      }),
    ).toEqual({
      event: 'job.started',
      status: 'a',
      at: '2026-01-01T09:30:00Z',
      id: 'string',
      count: 1,
      ok: true,
      files: [{ url: 'https://bridge.example.com/path' }],
    });
  });

  it("follows a oneOf's first branch, leaving out what only the others require", () => {
    expect(
      exampleFor({
        type: 'object',
        properties: {
          id: { type: 'string' },
          participant: { type: 'object' },
          registrant: { type: 'object' },
        },
        oneOf: [{ required: ['participant'] }, { required: ['registrant'] }],
      }),
    ).toEqual({ id: 'string', participant: {} });
  });

  it("prefers the schema's own example", () => {
    expect(exampleFor({ type: 'string', examples: ['given'] })).toBe('given');
  });
});
