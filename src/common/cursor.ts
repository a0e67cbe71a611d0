import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { ApiError } from './api-error';
import { UUID_PATTERN } from './uuid-param';

/** Position after the last row of a page ordered by (created_at DESC, id DESC); created_at columns are timestamptz(3) so the millisecond ISO string is exact. */
export interface Cursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString('base64url');
}

// Only what encodeCursor writes for a time PostgreSQL can store: four digits of year from 0001
// (toISOString also writes year 0000, "-000001-…" and "+275760-…", which PostgreSQL refuses
// with an error, a 500), and a date that exists (Date.parse rolls 02-30 over into March).
const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export function isStorableIsoTime(value: string): boolean {
  if (!ISO_MILLIS.test(value) || value.startsWith('0000')) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value;
}

export function decodeCursor(value: string | undefined): Cursor | null {
  if (value === undefined || value === '') return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      isStorableIsoTime(parsed[0]) &&
      typeof parsed[1] === 'string' &&
      UUID_PATTERN.test(parsed[1])
    ) {
      return { createdAt: parsed[0], id: parsed[1] };
    }
  } catch {
    // fall through to the 400 below
  }
  throw ApiError.validation([{ field: 'cursor', message: 'cursor is not a valid page cursor' }]);
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
