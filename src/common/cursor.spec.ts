import { ApiError } from './api-error';
import { PAGE_CURSOR_PATTERN, decodeCursor, encodeCursor, toPage } from './cursor';

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

  it('writes what the document states of a cursor, and takes every cursor it states', () => {
    for (const time of ['1970-01-01T00:00:00.000Z', '2026-01-01T09:30:00.123Z']) {
      const cursor = encodeCursor({ createdAt: new Date(time), id: ID });
      expect(cursor).toMatch(new RegExp(PAGE_CURSOR_PATTERN));
    }
    // The pattern's extremes: 14 digits is year 5138, which PostgreSQL stores.
    for (const ms of ['0', '99999999999999']) {
      expect(decodeCursor(`${ms}_${ID.toUpperCase()}`)).toEqual({
        createdAt: new Date(Number(ms)).toISOString(),
        id: ID,
      });
    }
  });

  it('treats an absent or empty cursor as the first page', () => {
    expect(decodeCursor(undefined)).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });

  it.each([
    ['not a cursor', 'not-a-cursor'],
    ['the JSON cursor of earlier versions', raw(['2026-01-01T00:00:00.000Z', ID])],
    ['an ISO time', `2026-01-01T00:00:00.000Z_${ID}`],
    ['a negative time', `-1_${ID}`],
    ['a time past 14 digits', `100000000000000_${ID}`],
    ['a time with a fraction', `1.5_${ID}`],
    ['no id', '1767225600000_'],
    ['an id of 36 dashes', `1767225600000_${'-'.repeat(36)}`],
    ['an id that is not a UUID', `1767225600000_${'x'.repeat(36)}`],
    ['something after the id', `1767225600000_${ID}_1`],
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
