import { ApiPropertyOptional } from '@nestjs/swagger';
import { FieldRule, Satisfies } from '../../common/field-rule';
import { PageCursor, PageLimit } from '../../common/page-query';
import { EventKindFilter } from '../../dispatcher/api/dto/list-deliveries.query';
import { TIMESTAMP_SCHEMA, timestampRule } from '../../dispatcher/api/dto/replay.dto';

/** As the platform sends x-zm-trackingid: printable ASCII, at most 255 characters. */
export const TRACKING_ID_PATTERN = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

const trackingIdRule: FieldRule = (value, field) =>
  typeof value === 'string' && TRACKING_ID_PATTERN.test(value)
    ? null
    : `${field} must be 1 to 255 printable ASCII characters`;

/** Query of GET /api/events (docs/operations.md). */
export class ListEventsQuery {
  @ApiPropertyOptional({
    description:
      "Only the event the platform sent with this `x-zm-trackingid` header (as the notification's " +
      '`source.tracking_id` shows it)',
    example: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
    pattern: TRACKING_ID_PATTERN.source,
    maxLength: 255,
  })
  @Satisfies(trackingIdRule, { optional: true })
  tracking_id?: string;

  @EventKindFilter()
  event?: string;

  @ApiPropertyOptional({
    description: 'Only events published at or after this time (ISO 8601 UTC)',
    example: '2026-01-01T09:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @Satisfies(timestampRule, { optional: true })
  since?: string;

  @ApiPropertyOptional({
    description: 'Only events published before this time (ISO 8601 UTC)',
    example: '2026-01-01T12:00:00Z',
    ...TIMESTAMP_SCHEMA,
  })
  @Satisfies(timestampRule, { optional: true })
  until?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}
