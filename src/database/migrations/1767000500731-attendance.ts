import { MigrationInterface, QueryRunner } from 'typeorm';

// Written out here rather than imported: migrations import nothing outside src/database.
const ENDED = `'meeting.ended', 'webinar.ended'`;
const PARTICIPANT = `'meeting.participant_joined', 'meeting.participant_left', 'webinar.participant_joined', 'webinar.participant_left'`;

/**
 * Meeting attendance (docs/attendance.md): one row per ended occurrence, its latest computed
 * attendance, and the settle timer as data so that it survives restarts.
 *
 * A trigger on inbound_events starts (or restarts) the timer whatever stored the event (the
 * endpoint, the socket, reconciliation, a replay): an ended event creates the row, and a
 * participant event of an occurrence that has one restarts its wait. Done in the statement that
 * stores the events, so no crash between storing and noting can lose a recomputation.
 * `settle_from` is when the wait began; the row is due at settle_from + ATTENDANCE_SETTLE_MS
 * (the trigger cannot read configuration, and a changed setting then applies to waits
 * already begun). `changes` counts inputs stored; `computed_changes` is the count the last
 * computation saw, so an input stored during a computation leaves the row due.
 *
 * The index lets a computation read one occurrence's inputs in id order, page by page.
 */
export class Attendance1767000500731 implements MigrationInterface {
  name = 'Attendance1767000500731';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE attendance (
        uuid text PRIMARY KEY,
        id uuid NOT NULL DEFAULT uuid_v7() UNIQUE,
        account_id text,
        settle_from timestamptz,
        changes bigint NOT NULL DEFAULT 1,
        computed_changes bigint NOT NULL DEFAULT 0,
        revision int NOT NULL DEFAULT 0,
        published_revision int NOT NULL DEFAULT 0,
        digest text,
        data json,
        summary json,
        end_time timestamptz(3),
        computed_at timestamptz(3),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX attendance_due_idx ON attendance (settle_from)
       WHERE changes > computed_changes OR revision > published_revision`,
    );
    await q.query(
      `CREATE INDEX attendance_end_idx ON attendance (end_time DESC, id DESC) WHERE revision > 0`,
    );
    await q.query(
      `CREATE INDEX inbound_events_attendance_idx
       ON inbound_events ((payload #>> '{payload,object,uuid}'), id)
       WHERE event IN (${ENDED}, ${PARTICIPANT})`,
    );
    await q.query(`
      CREATE FUNCTION attendance_inputs_stored() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO attendance AS a (uuid, account_id, settle_from)
        SELECT e.uuid, e.account_id, now() FROM (
          SELECT DISTINCT ON (payload #>> '{payload,object,uuid}')
            payload #>> '{payload,object,uuid}' AS uuid, account_id
          FROM added
          WHERE event IN (${ENDED}) AND coalesce(payload #>> '{payload,object,uuid}', '') <> ''
          ORDER BY payload #>> '{payload,object,uuid}', id
        ) e
        ORDER BY e.uuid
        ON CONFLICT (uuid) DO UPDATE SET settle_from = now(), changes = a.changes + 1;
        UPDATE attendance a SET settle_from = now(), changes = a.changes + 1
        FROM (
          SELECT DISTINCT payload #>> '{payload,object,uuid}' AS uuid FROM added
          WHERE event IN (${PARTICIPANT})
        ) p
        WHERE a.uuid = p.uuid;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER inbound_events_attendance AFTER INSERT ON inbound_events
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT
      EXECUTE FUNCTION attendance_inputs_stored()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER inbound_events_attendance ON inbound_events`);
    await q.query(`DROP FUNCTION attendance_inputs_stored()`);
    await q.query(`DROP INDEX inbound_events_attendance_idx`);
    await q.query(`DROP TABLE attendance`);
  }
}
