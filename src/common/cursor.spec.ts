import { ApiError } from './api-error';
import { decodeCursor, encodeCursor, toPage } from './cursor';

const ID = '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d';
const raw = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('cursor', () => {
  it('round-trips a row position', () => {
    const createdAt = new Date('2026-01-01T09:30:00.123Z');
    expect(decodeCursor(encodeCursor({ createdAt, id: ID }))).toEqual({
      createdAt: '2026-01-01T09:30:00.123Z',
      id: ID,
    });
  });

  it('accepts the first and last times PostgreSQL and encodeCursor share', () => {
    for (const time of ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      expect(decodeCursor(raw([time, ID]))).toEqual({ createdAt: time, id: ID });
    }
  });

  it('treats an absent or empty cursor as the first page', () => {
    expect(decodeCursor(undefined)).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });

  it.each([
    ['not base64 JSON', 'not-a-cursor'],
    ['a wrong shape', raw({ createdAt: '2026-01-01T00:00:00.000Z', id: ID })],
    ['a non-canonical time', raw(['2026-01-01', ID])],
    ['a loosely parsed time', raw(['March 7, 2026', ID])],
    ['a time past year 9999', raw(['+275760-09-13T00:00:00.000Z', ID])],
    ['year 0000, which PostgreSQL does not have', raw(['0000-01-01T00:00:00.000Z', ID])],
    ['a negative year', raw(['-000001-01-01T00:00:00.000Z', ID])],
    ['a date that does not exist', raw(['2026-02-30T00:00:00.000Z', ID])],
    ['an hour out of range', raw(['2026-01-01T24:00:00.000Z', ID])],
    ['an array of more than two', raw(['2026-01-01T00:00:00.000Z', ID, ID])],
    ['a number for the time', raw([1767225600000, ID])],
    ['an id of 36 dashes', raw(['2026-01-01T00:00:00.000Z', '-'.repeat(36)])],
    ['an id that is not a UUID', raw(['2026-01-01T00:00:00.000Z', 'x'.repeat(36)])],
  ])('refuses %s with 400 naming cursor', (_, value) => {
    let thrown: unknown;
    try {
      decodeCursor(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).getStatus()).toBe(400);
    expect((thrown as ApiError).extra.details).toEqual([
      { field: 'cursor', message: 'cursor is not a valid page cursor' },
    ]);
  });

  it('pages: next_cursor points at the last row shown, only when more rows exist', () => {
    const rows = [3, 2, 1].map((n) => ({
      createdAt: new Date(n * 1000),
      id: ID.replace('9', `${n}`),
    }));
    const full = toPage(rows, 2, (r) => r.id);
    expect(full.data).toEqual([rows[0].id, rows[1].id]);
    expect(decodeCursor(full.next_cursor ?? undefined)).toEqual({
      createdAt: rows[1].createdAt.toISOString(),
      id: rows[1].id,
    });
    expect(toPage(rows.slice(0, 2), 2, (r) => r.id).next_cursor).toBeNull();
  });
});
