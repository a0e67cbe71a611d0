import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { PAGE_CURSOR_PATTERN } from './cursor';
import { Satisfies } from './field-rule';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 100;

/** `limit` of a cursor-paginated list: an integer 1–100 in the query string. */
export function PageLimit(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_LIMIT,
      default: DEFAULT_PAGE_LIMIT,
      example: 20,
      description: 'Items per page',
    }),
    // Digits only: Number() alone would also take "1e1", " 5" or "0x10".
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value,
    ),
    Satisfies(
      (value, field) =>
        Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_PAGE_LIMIT
          ? null
          : `${field} must be an integer from 1 to ${MAX_PAGE_LIMIT}`,
      { optional: true },
    ),
  );
}

/** `cursor` of a cursor-paginated list: the `next_cursor` of the previous page, opaque. */
/** The document's format name of `cursor`. */
export const PAGE_CURSOR_FORMAT = 'page-cursor';

export function PageCursor(): PropertyDecorator {
  return applyDecorators(
    // No example: Swagger UI's "Try it out" would send it and so skip the first page.
    ApiPropertyOptional({
      description:
        '`next_cursor` of the previous page, as it was returned; omit for the first page. ' +
        'Any other value is refused (400).',
      // Its own format name, and a pattern such that every cursor it admits is taken.
      format: PAGE_CURSOR_FORMAT,
      pattern: PAGE_CURSOR_PATTERN,
    }),
    Satisfies((value, field) => (typeof value === 'string' ? null : `${field} must be a string`), {
      optional: true,
    }),
  );
}

/** `next_cursor` of a page's answer (toPage). */
export const NextCursor = (): PropertyDecorator =>
  ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'Pass as `cursor` for the next page; null on the last page',
  });
