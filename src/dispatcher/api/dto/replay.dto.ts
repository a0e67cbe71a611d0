import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldRule, Satisfies, quote } from '../../../common/field-rule';
import { DatedExample } from '../../../common/openapi-exact';

const REPLAY_STATUSES = ['failed', 'succeeded'] as const;

// An ISO 8601 UTC timestamp with Z, the wire format of every date of the API (also the event
// lookup's since and until).
// [0-9], not \d: the document's pattern must mean the same in every engine (in Python's, \d
// matches any Unicode digit).
const UTC_TIMESTAMP =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(\.[0-9]{1,6})?)?Z$/;

/** How the document states timestampRule: a date-time, in UTC with Z (an offset is refused). */
export const TIMESTAMP_SCHEMA = { format: 'date-time', pattern: UTC_TIMESTAMP.source } as const;

/**
 * Whether the fields name a time that exists: Date.parse rolls 2026-02-30 over into March 2
 * and 24:00 into the next day, so each field is read back from the date it made.
 */
function isRealTime(value: string): boolean {
  const match = UTC_TIMESTAMP.exec(value);
  if (match === null) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((f) => Number(f ?? 0));
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second);
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second
  );
}

export const timestampRule: FieldRule = (value, field) =>
  typeof value === 'string' && isRealTime(value)
    ? null
    : `${field} must be an ISO 8601 UTC timestamp such as 2026-01-01T09:30:00Z`;

const requiredTimestamp: FieldRule = (value, field) =>
  value === undefined ? `${field} is required` : timestampRule(value, field);

const statusRule: FieldRule = (value, field) =>
  (REPLAY_STATUSES as readonly unknown[]).includes(value)
    ? null
    : `${field} must be one of ${REPLAY_STATUSES.join(', ')}, got ${quote(value)}`;

const booleanRule: FieldRule = (value, field) =>
  typeof value === 'boolean' ? null : `${field} must be a boolean`;

/** Body of POST /api/webhooks/:id/replay (docs/api.md#receiver-health). Any other field is refused. */
export class ReplayDto {
  @ApiProperty({
    description:
      'Start of the window (included): deliveries created, and with `missed` events ' +
      'published, at or after it. At most RETENTION_DAYS ago.',
    example: '2026-01-01T09:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @DatedExample(-2 * 60 * 60 * 1000)
  @Satisfies(requiredTimestamp)
  since: string;

  @ApiPropertyOptional({
    description: 'End of the window (excluded); default now',
    example: '2026-01-01T12:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @DatedExample(-60 * 60 * 1000)
  @Satisfies(timestampRule, { optional: true })
  until?: string;

  @ApiPropertyOptional({
    enum: REPLAY_STATUSES,
    default: 'failed',
    description: 'Which deliveries of the window to send again',
  })
  @Satisfies(statusRule, { optional: true })
  status?: (typeof REPLAY_STATUSES)[number];

  @ApiPropertyOptional({
    default: false,
    description:
      'Also deliver the events of its kinds published in the window after the webhook was ' +
      'created that it never received (it was inactive or disabled then); each once',
  })
  @Satisfies(booleanRule, { optional: true })
  missed?: boolean;
}

export class ReplayResponse {
  @ApiProperty({ example: 12, description: 'Deliveries queued, missed ones included' })
  count: number;
}
