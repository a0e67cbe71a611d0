import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cursor } from '../common/cursor';
import { query, queryArrays } from '../database/query';
import type { Statement } from '../delivery-record/statement';
import type { OccurrenceInput, ParticipantInput } from './attendance';

// The partial index inbound_events_attendance_idx is used only when a statement's WHERE states
// its expression and an event list within its own, literally (not as a parameter).
const UUID_OF = `(payload #>> '{payload,object,uuid}')`;
const ENDED = `'meeting.ended', 'webinar.ended'`;
const PARTICIPANT = `'meeting.participant_joined', 'meeting.participant_left', 'webinar.participant_joined', 'webinar.participant_left'`;

/** Rows that are due: inputs stored since the last computation and settled, or a revision not yet published. */
const DUE_SQL = `
  SELECT uuid, changes::text AS changes FROM attendance
  WHERE (changes > computed_changes OR revision > published_revision)
    AND (revision > published_revision OR settle_from <= now() - make_interval(secs => $1::int / 1000.0))
  ORDER BY settle_from LIMIT $2`;

const STATE_SQL = `
  SELECT uuid, account_id, changes::text AS changes, computed_changes::text AS computed_changes,
    revision, published_revision, digest
  FROM attendance WHERE uuid = $1`;

const OCCURRENCE_SQL = `
  SELECT event, event_ts::text AS event_ts, via, tracking_id,
    payload #>> '{payload,object,id}' AS id,
    payload #>> '{payload,object,topic}' AS topic,
    payload #>> '{payload,object,host_id}' AS host_id,
    payload #>> '{payload,object,start_time}' AS start_time,
    payload #>> '{payload,object,end_time}' AS end_time
  FROM inbound_events
  WHERE ${UUID_OF} = $1 AND event IN (${ENDED})
  ORDER BY id LIMIT 1`;

// Rows as arrays (queryArrays), the columns in this order.
const INPUTS_SQL = `
  SELECT id, event LIKE '%left' AS left,
    CASE WHEN event LIKE '%left' THEN p ->> 'leave_time' ELSE p ->> 'join_time' END AS time,
    event_ts::text AS event_ts, p ->> 'user_id' AS user_id,
    p ->> 'participant_user_id' AS participant_user_id, p ->> 'email' AS email,
    p ->> 'user_name' AS user_name, p ->> 'registrant_id' AS registrant_id,
    p ->> 'customer_key' AS customer_key, p ->> 'participant_uuid' AS participant_uuid
  FROM inbound_events, LATERAL (SELECT payload #> '{payload,object,participant}' AS p) x
  WHERE ${UUID_OF} = $1 AND event IN (${PARTICIPANT}) AND id > $2
  ORDER BY id LIMIT $3`;

const SAVE_SQL = `
  UPDATE attendance SET revision = $3, digest = $4, data = $5::json, end_time = $6,
    computed_at = now(), computed_changes = $7, summary = $8::json
  WHERE uuid = $1 AND revision = $2 AND computed_changes < $7
  RETURNING revision`;

const UNCHANGED_SQL = `
  UPDATE attendance SET computed_changes = $2 WHERE uuid = $1 AND computed_changes < $2`;

const PUBLISHED_SQL = `
  UPDATE attendance SET published_revision = greatest(published_revision, $2) WHERE uuid = $1`;

// The one place the caller's accounts narrow what is read (docs/attendance.md#accounts): $2 is
// null until tenancy by platform account is built, and then the account ids the client holds.
const ACCOUNT_FILTER = `($2::text[] IS NULL OR account_id = ANY($2::text[]))`;

const LATEST_SQL = `SELECT data FROM attendance WHERE uuid = $1 AND revision > 0`;

const GET_SQL = `
  SELECT data, computed_at FROM attendance
  WHERE uuid = $1 AND revision > 0 AND ${ACCOUNT_FILTER}`;

const LIST_SQL = `
  SELECT id, uuid, revision, end_time, computed_at,
    summary -> 'id' AS meeting_id, summary -> 'topic' AS topic, summary -> 'host_id' AS host_id,
    summary -> 'start_time' AS start_time, summary -> 'duration_seconds' AS duration_seconds,
    summary -> 'participants_count' AS participants_count
  FROM attendance
  WHERE revision > 0 AND ${ACCOUNT_FILTER}
    AND ($3::timestamptz IS NULL OR end_time >= $3) AND ($4::timestamptz IS NULL OR end_time < $4)
    AND ($5::timestamptz IS NULL OR (end_time, id) < ($5, $6::uuid))
  ORDER BY end_time DESC, id DESC LIMIT $1`;

// The occurrences of a platform account that left, up to when it left (docs/accounts.md#leaving):
// the retention job asks, this module owning the table.
const PURGE_ACCOUNT_SQL = `
  WITH a AS (DELETE FROM attendance WHERE account_id = $1 AND created_at <= $2 RETURNING 1)
  SELECT count(*)::int AS attendance FROM a`;

export const ATTENDANCE_STATEMENTS: Statement[] = [
  { method: 'AttendanceStore.due', sql: DUE_SQL },
  { method: 'AttendanceStore.state', sql: STATE_SQL },
  { method: 'AttendanceStore.occurrence', sql: OCCURRENCE_SQL },
  { method: 'AttendanceStore.inputs', sql: INPUTS_SQL },
  { method: 'AttendanceStore.save', sql: SAVE_SQL },
  { method: 'AttendanceStore.saveUnchanged', sql: UNCHANGED_SQL },
  { method: 'AttendanceStore.published', sql: PUBLISHED_SQL },
  { method: 'AttendanceStore.latest', sql: LATEST_SQL },
  { method: 'AttendanceStore.get', sql: GET_SQL },
  { method: 'AttendanceStore.list', sql: LIST_SQL },
  { method: 'AttendanceStore.purgeAccount', sql: PURGE_ACCOUNT_SQL },
];

/** Rows of the inputs read per round trip: memory stays bounded whatever a meeting holds. */
export const INPUT_PAGE = 10_000;

export interface AttendanceState {
  uuid: string;
  accountId: string | null;
  /** Inputs stored so far, and how many the last computation saw (bigint counters as text). */
  changes: string;
  computedChanges: string;
  revision: number;
  publishedRevision: number;
  digest: string | null;
}

export interface EndedEvent {
  occurrence: Omit<OccurrenceInput, 'uuid'>;
  event: string;
  eventTs: number | null;
  via: string;
  trackingId: string | null;
}

export interface AttendanceSummaryRow {
  id: string;
  uuid: string;
  revision: number;
  createdAt: Date;
  computedAt: Date;
  meetingId: string | null;
  topic: string | null;
  hostId: string | null;
  startTime: string | null;
  durationSeconds: number | null;
  participantsCount: number;
}

export interface ListFilter {
  /** Account ids the caller holds; null: every account (docs/attendance.md#accounts). */
  accounts: string[] | null;
  since?: Date;
  until?: Date;
  cursor: Cursor | null;
  limit: number;
}

const numberOrNull = (value: string | null): number | null =>
  value === null || value === '' ? null : Number(value);

/** The attendance table and the inputs it is computed from (docs/attendance.md). */
@Injectable()
export class AttendanceStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Uuids due for computation (settled for `settleMs`) or publication, oldest wait first. */
  async due(settleMs: number, limit: number): Promise<{ uuid: string; changes: string }[]> {
    return query(this.db, DUE_SQL, [settleMs, limit]);
  }

  async state(uuid: string): Promise<AttendanceState | null> {
    const rows = await query<{
      uuid: string;
      account_id: string | null;
      changes: string;
      computed_changes: string;
      revision: number;
      published_revision: number;
      digest: string | null;
    }>(this.db, STATE_SQL, [uuid]);
    const row = rows[0];
    if (!row) return null;
    return {
      uuid: row.uuid,
      accountId: row.account_id,
      changes: row.changes,
      computedChanges: row.computed_changes,
      revision: row.revision,
      publishedRevision: row.published_revision,
      digest: row.digest,
    };
  }

  /** The occurrence's first stored `*.ended` event, or null when none is stored (any more). */
  async occurrence(uuid: string): Promise<EndedEvent | null> {
    const rows = await query<{
      event: string;
      event_ts: string | null;
      via: string;
      tracking_id: string | null;
      id: string | null;
      topic: string | null;
      host_id: string | null;
      start_time: string | null;
      end_time: string | null;
    }>(this.db, OCCURRENCE_SQL, [uuid]);
    const row = rows[0];
    if (!row) return null;
    const eventTs = numberOrNull(row.event_ts);
    return {
      event: row.event,
      eventTs,
      via: row.via,
      trackingId: row.tracking_id,
      occurrence: {
        id: row.id,
        topic: row.topic,
        host_id: row.host_id,
        start_time: row.start_time,
        end_time: row.end_time,
        eventTs,
      },
    };
  }

  /**
   * Every stored participant event of the occurrence, from every source, page by page in the
   * order stored (INPUT_PAGE rows per round trip; nothing holds them all at once).
   */
  async *inputs(uuid: string): AsyncGenerator<ParticipantInput[]> {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = (await queryArrays(this.db, INPUTS_SQL, [uuid, after, INPUT_PAGE])) as [
        string,
        boolean,
        ...(string | null)[],
      ][];
      if (rows.length === 0) return;
      after = rows[rows.length - 1][0];
      yield rows.map((r) => ({
        kind: r[1] ? 'left' : 'joined',
        time: r[2],
        eventTs: numberOrNull(r[3]),
        user_id: r[4],
        participant_user_id: r[5],
        email: r[6],
        user_name: r[7],
        registrant_id: r[8],
        customer_key: r[9],
        participant_uuid: r[10],
      }));
      if (rows.length < INPUT_PAGE) return;
    }
  }

  /**
   * Stores a new revision computed from `changes` inputs, unless another computation stored one
   * first (then false: the newer stands, and the row stays due if inputs came after it).
   */
  async save(
    state: AttendanceState,
    next: {
      revision: number;
      digest: string;
      json: string;
      /** The data without its participants, which lists show. */
      summary: object;
      endTime: Date;
      changes: string;
    },
  ): Promise<boolean> {
    const rows = await query(this.db, SAVE_SQL, [
      state.uuid,
      state.revision,
      next.revision,
      next.digest,
      next.json,
      next.endTime,
      next.changes,
      JSON.stringify(next.summary),
    ]);
    return rows.length === 1;
  }

  /** The inputs up to `changes` changed nothing: no revision, nothing to send. */
  async saveUnchanged(uuid: string, changes: string): Promise<void> {
    await query(this.db, UNCHANGED_SQL, [uuid, changes]);
  }

  async published(uuid: string, revision: number): Promise<void> {
    await query(this.db, PUBLISHED_SQL, [uuid, revision]);
  }

  /** The latest revision's data, for publishing it (a process that computed it may have died first). */
  async latest(uuid: string): Promise<Record<string, unknown> | null> {
    const rows = await query<{ data: Record<string, unknown> }>(this.db, LATEST_SQL, [uuid]);
    return rows[0]?.data ?? null;
  }

  /** The latest attendance with when it was computed, or null before it is. */
  async get(
    uuid: string,
    accounts: string[] | null,
  ): Promise<{ data: Record<string, unknown>; computedAt: Date } | null> {
    const rows = await query<{ data: Record<string, unknown>; computed_at: Date }>(
      this.db,
      GET_SQL,
      [uuid, accounts],
    );
    return rows[0] ? { data: rows[0].data, computedAt: rows[0].computed_at } : null;
  }

  /** Computed occurrences by their end, newest first: `limit + 1` at most (see toPage). */
  async list(filter: ListFilter): Promise<AttendanceSummaryRow[]> {
    const rows = await query<{
      id: string;
      uuid: string;
      revision: number;
      end_time: Date;
      computed_at: Date;
      meeting_id: string | null;
      topic: string | null;
      host_id: string | null;
      start_time: string | null;
      duration_seconds: number | null;
      participants_count: number;
    }>(this.db, LIST_SQL, [
      filter.limit + 1,
      filter.accounts,
      filter.since ?? null,
      filter.until ?? null,
      filter.cursor?.createdAt ?? null,
      filter.cursor?.id ?? null,
    ]);
    return rows.map((row) => ({
      id: row.id,
      uuid: row.uuid,
      revision: row.revision,
      // The page's order: the cursor helper knows it as createdAt.
      createdAt: row.end_time,
      computedAt: row.computed_at,
      meetingId: row.meeting_id,
      topic: row.topic,
      hostId: row.host_id,
      startTime: row.start_time,
      durationSeconds: row.duration_seconds,
      participantsCount: row.participants_count,
    }));
  }

  /** Deletes the attendance of a platform account that left, up to when it left; how many. */
  async purgeAccount(accountId: string, upTo: Date): Promise<number> {
    const [row] = await query<{ attendance: number }>(this.db, PURGE_ACCOUNT_SQL, [
      accountId,
      upTo,
    ]);
    return row.attendance;
  }
}
