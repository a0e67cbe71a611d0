import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Satisfies } from '../../common/field-rule';
import { NextCursor, PageCursor, PageLimit } from '../../common/page-query';
import { TIMESTAMP_SCHEMA, timestampRule } from '../../dispatcher/api/dto/replay.dto';
import { EVENT_TYPES } from '../../webhooks/event-catalog';
import { ATTENDANCE_EVENT } from '../../webhooks/subscription-events';
import type { AttendanceSummaryRow } from '../attendance.store';

/** The catalog's schema of `data`, so the API and the notification cannot disagree. */
const DATA_SCHEMA = (
  EVENT_TYPES.find((t) => t.name === ATTENDANCE_EVENT)!.schema.properties as Record<
    string,
    { properties: Record<string, object>; examples: Record<string, unknown>[] }
  >
).data;
export const ATTENDANCE_EXAMPLE = DATA_SCHEMA.examples[0];

/**
 * A JSON Schema of the catalog as OpenAPI 3.0 states it: `nullable` where JSON Schema lists
 * "null" among the types, an `enum` of one for a `const`.
 */
function openApiOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openApiOf);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && Array.isArray(value)) {
      const own = (value as string[]).filter((t) => t !== 'null');
      out.type = own[0];
      if (own.length < value.length) out.nullable = true;
    } else if (key === 'const') {
      out.enum = [value];
    } else {
      out[key] = openApiOf(value);
    }
  }
  return out;
}

/** A property of the catalog's `data`, with the catalog example's value. */
const field = (name: string): Record<string, unknown> => ({
  ...(openApiOf(DATA_SCHEMA.properties[name]) as Record<string, unknown>),
  example: ATTENDANCE_EXAMPLE[name],
});

/** One occurrence of GET /api/attendance: the attendance without its participants. */
export class AttendanceSummary {
  @ApiProperty(field('id'))
  id: string | null;

  @ApiProperty(field('uuid'))
  uuid: string;

  @ApiProperty(field('revision'))
  revision: number;

  @ApiProperty(field('topic'))
  topic: string | null;

  @ApiProperty(field('host_id'))
  host_id: string | null;

  @ApiProperty(field('start_time'))
  start_time: string | null;

  @ApiProperty(field('end_time'))
  end_time: string | null;

  @ApiProperty(field('duration_seconds'))
  duration_seconds: number | null;

  @ApiProperty(field('participants_count'))
  participants_count: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    description: 'When this revision was computed',
    example: '2025-01-01T11:10:02.311Z',
  })
  computed_at: string;
}

/** GET /api/attendance/{uuid}: `data` of the latest meeting.attendance, and when it was computed. */
export class AttendanceResponse extends AttendanceSummary {
  @ApiProperty(field('participants'))
  participants: object[];
}

export class AttendanceListResponse {
  @ApiProperty({ type: [AttendanceSummary], description: 'Newest end first' })
  data: AttendanceSummary[];

  @NextCursor()
  next_cursor: string | null;
}

/** Query of GET /api/attendance. */
export class ListAttendanceQuery {
  @ApiPropertyOptional({
    description: 'Only occurrences that ended at or after this time (ISO 8601 UTC)',
    example: '2025-01-01T00:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @Satisfies(timestampRule, { optional: true })
  since?: string;

  @ApiPropertyOptional({
    description: 'Only occurrences that ended before this time (ISO 8601 UTC)',
    example: '2025-01-02T00:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @Satisfies(timestampRule, { optional: true })
  until?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

export const summaryResponse = (row: AttendanceSummaryRow): AttendanceSummary => ({
  id: row.meetingId,
  uuid: row.uuid,
  revision: row.revision,
  topic: row.topic,
  host_id: row.hostId,
  start_time: row.startTime,
  end_time: row.createdAt.toISOString(),
  duration_seconds: row.durationSeconds,
  participants_count: row.participantsCount,
  computed_at: row.computedAt.toISOString(),
});
