import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldRule, Satisfies } from '../../../../common/field-rule';
import { DatedExample } from '../../../../common/openapi-exact';
import { NextCursor, PageCursor, PageLimit } from '../../../../common/page-query';
import { TIMESTAMP_SCHEMA, timestampRule } from '../../../../dispatcher/api/dto/replay.dto';
import { RUN_STATUSES, RUN_TRIGGERS, Run, RunStatus, RunTrigger } from '../reconciliation.store';

const requiredTimestamp: FieldRule = (value, field) =>
  value === undefined ? `${field} is required` : timestampRule(value, field);

const booleanRule: FieldRule = (value, field) =>
  typeof value === 'boolean' ? null : `${field} must be a boolean`;

/** A platform account id as the platform writes them (docs/accounts.md). */
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const accountIdRule: FieldRule = (value, field) =>
  typeof value === 'string' && ACCOUNT_ID.test(value)
    ? null
    : `${field} must be a platform account id (letters, digits, _ and -, at most 64)`;

/** Body of POST /api/reconciliations. Any other field is refused. */
export class CreateReconciliationDto {
  @ApiProperty({
    ...TIMESTAMP_SCHEMA,
    description:
      'Start of the window (included). At most RETENTION_DAYS ago, and at most 31 days ' +
      'before `until`.',
    example: '2026-01-01T08:00:00Z',
  })
  @DatedExample(-3 * 60 * 60 * 1000)
  @Satisfies(requiredTimestamp)
  since: string;

  @ApiPropertyOptional({
    ...TIMESTAMP_SCHEMA,
    description: 'End of the window (excluded); default now. Not in the future.',
    example: '2026-01-01T10:00:00Z',
  })
  @DatedExample(-60 * 60 * 1000)
  @Satisfies(timestampRule, { optional: true })
  until?: string;

  @ApiPropertyOptional({
    default: false,
    description: 'Only count what is missing (`missing`); create nothing',
  })
  @Satisfies(booleanRule, { optional: true })
  dry_run?: boolean;

  @ApiPropertyOptional({
    pattern: ACCOUNT_ID.source,
    maxLength: 64,
    description:
      'An installed platform account the caller holds, read with its own token and request ' +
      'budget (docs/accounts.md); default the server-to-server account',
    example: 'AbC123xyz',
  })
  @Satisfies(accountIdRule, { optional: true })
  account_id?: string;
}

export class ListReconciliationsQuery {
  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}

class ReconciliationChecked {
  @ApiProperty({ example: 120, description: 'Meetings of the window the dashboard listed' })
  meetings: number;

  @ApiProperty({ example: 4, description: 'Webinars of the window the dashboard listed' })
  webinars: number;

  @ApiProperty({ example: 1800, description: 'Rows of their participant reports' })
  participants: number;

  @ApiProperty({ example: 30, description: 'Recordings read' })
  recordings: number;
}

class ReconciliationError {
  @ApiProperty({
    example: 'webinars',
    description:
      'The source: meetings, webinars, meeting_participants, webinar_participants or recordings',
  })
  source: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 403,
    description: "The platform's status; null when it could not be reached",
  })
  status: number | null;

  @ApiProperty({ example: 'Invalid access token, does not contain scopes.' })
  message: string;
}

const COUNTS = {
  type: 'object',
  additionalProperties: { type: 'integer' },
  example: { 'meeting.participant_joined': 40, 'meeting.ended': 2 },
} as const;

/** A reconciliation run (docs/reconciliation.md). */
export class ReconciliationResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({
    enum: RUN_TRIGGERS,
    description: 'On demand (`manual`), the schedule, or after a gap of the platform socket',
  })
  trigger: RunTrigger;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'AbC123xyz',
    description: 'The installed platform account it reads; null: the server-to-server one',
  })
  account_id: string | null;

  @ApiProperty({ format: 'date-time', description: 'Start of the window (included)' })
  since: string;

  @ApiProperty({ format: 'date-time', description: 'End of the window (excluded)' })
  until: string;

  @ApiProperty({ description: 'Counted only, nothing created' })
  dry_run: boolean;

  @ApiProperty({
    enum: RUN_STATUSES,
    description:
      '`partial`: a source the credentials may not read was skipped (see `errors`); ' +
      '`failed`: the platform could not be reached',
  })
  status: RunStatus;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  started_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at: string | null;

  @ApiProperty({ type: ReconciliationChecked, description: 'What the platform reported' })
  checked: ReconciliationChecked;

  @ApiProperty({
    ...COUNTS,
    description: 'Platform events of the window the service had not received, per event name',
  })
  missing: Record<string, number>;

  @ApiProperty({ ...COUNTS, description: 'Platform events created, per event name' })
  created: Record<string, number>;

  @ApiProperty({ type: [ReconciliationError], description: 'Sources skipped or failing' })
  errors: ReconciliationError[];

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class ReconciliationListResponse {
  @ApiProperty({ type: [ReconciliationResponse] })
  data: ReconciliationResponse[];

  @NextCursor()
  next_cursor: string | null;
}

export function runResponse(run: Run): ReconciliationResponse {
  return {
    id: run.id,
    trigger: run.trigger,
    account_id: run.accountId,
    since: run.since.toISOString(),
    until: run.until.toISOString(),
    dry_run: run.dryRun,
    status: run.status,
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
    checked: run.checked,
    missing: run.missing,
    created: run.created,
    errors: run.errors,
    created_at: run.createdAt.toISOString(),
  };
}
