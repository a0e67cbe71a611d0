import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { ApiError } from './api-error';

/** Position after the last row of a page ordered by (created_at DESC, id DESC); created_at columns are timestamptz(3) so the millisecond ISO string is exact. */
export interface Cursor {
  createdAt: string;
  id: string;
}

/**
 * `<created_at in ms since the epoch>_<id>`: a form a regular expression states whole
 * (PAGE_CURSOR_PATTERN, in the document), so that every cursor the pattern admits is one the
 * service takes. Up to 14 digits: from 1970 to year 5138, each a time PostgreSQL stores.
 */
const CURSOR =
  /^([0-9]{1,14})_([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

/** The cursor's pattern as the document states it; an empty cursor is the first page. */
export const PAGE_CURSOR_PATTERN = `^(${CURSOR.source.slice(1, -1)})?$`;

export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return `${row.createdAt.getTime()}_${row.id}`;
}

export function decodeCursor(value: string | undefined): Cursor | null {
  if (value === undefined || value === '') return null;
  const match = CURSOR.exec(value);
  if (!match) {
    throw ApiError.validation([{ field: 'cursor', message: 'cursor is not a valid page cursor' }]);
  }
  return { createdAt: new Date(Number(match[1])).toISOString(), id: match[2].toLowerCase() };
}

/**
 * Builds a page from `limit + 1` rows fetched after the cursor: the extra row only tells
 * whether another page exists.
 */
export function toPage<T extends { createdAt: Date; id: string }, R>(
  rows: T[],
  limit: number,
  map: (row: T) => R,
): { data: R[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(map),
    next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
  };
}

/**
 * Orders a list query newest first by (created_at, id) of `alias`, starts it after `cursor`
 * and fetches the `limit + 1` rows that toPage expects.
 */
export function keysetPage<T extends ObjectLiteral>(
  select: SelectQueryBuilder<T>,
  alias: string,
  cursor: Cursor | null,
  limit: number,
): SelectQueryBuilder<T> {
  select
    .orderBy(`${alias}.created_at`, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(limit + 1);
  if (cursor) {
    select.andWhere(
      `(${alias}.created_at, ${alias}.id) < (CAST(:cursorCreatedAt AS timestamptz), CAST(:cursorId AS uuid))`,
      { cursorCreatedAt: cursor.createdAt, cursorId: cursor.id },
    );
  }
  return select;
}
