import { ApiQueryOptions } from '@nestjs/swagger';
import { ApiError } from '../common/api-error';
import { RECORDING_FILE_TYPES } from '../zoom/zoom-recordings';

/** This service's own query parameter on the two recording routes; never sent to the platform. */
export const FILE_TYPE = 'file_type';

/** A letter as either case, spelled out: ECMA-262 patterns have no inline `(?i)` flag. */
const caseless = (word: string): string =>
  word.replace(/[A-Za-z]/g, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);

const FILE_TYPE_ITEM = ` *(?:${RECORDING_FILE_TYPES.map(caseless).join('|')}) *`;

/** What fileTypesOf takes, as the document states it (spaces around a type are the ones it trims). */
export const FILE_TYPE_PATTERN = `^${FILE_TYPE_ITEM}(?:,${FILE_TYPE_ITEM})*$`;

export const FILE_TYPE_QUERY: ApiQueryOptions = {
  name: FILE_TYPE,
  required: false,
  description:
    `Keep only files of these types, comma-separated (or repeated), from ${RECORDING_FILE_TYPES.join(', ')}. ` +
    "Filtered by this service, not sent to the platform: the platform's totals are left as it " +
    'sent them.',
  schema: { type: 'string', pattern: FILE_TYPE_PATTERN, example: 'MP4,TRANSCRIPT' },
};

/**
 * `file_type=MP4,transcript` (or repeated) as upper-case file types; null when absent. An
 * unknown type or an empty list is a 400 naming file_type.
 */
export function fileTypesOf(query: URLSearchParams): string[] | null {
  const given = query.getAll(FILE_TYPE);
  if (given.length === 0) return null;
  const types = given
    .flatMap((v) => v.split(','))
    .map((t) => t.trim().toUpperCase())
    .filter(Boolean);
  const problem =
    types.length === 0
      ? 'file_type must name at least one file type'
      : types.some((t) => !(RECORDING_FILE_TYPES as readonly string[]).includes(t))
        ? `file_type must list only ${RECORDING_FILE_TYPES.join(', ')}`
        : null;
  if (problem) throw ApiError.validation([{ field: FILE_TYPE, message: problem }]);
  return types;
}
