import { MigrationInterface, QueryRunner } from 'typeorm';

// Written out here rather than imported: migrations import nothing outside src/database.
const ENDED = `'meeting.ended', 'webinar.ended'`;

/**
 * Attendance of what came before it (docs/attendance.md#occurrences-that-ended-before-attendance):
 * every occurrence whose ended event was stored before the attendance trigger existed gets its
 * row, due at once (its wait is counted from that event's arrival), so the workers compute it
 * in their usual batches. Its first revision is marked as published: the attendance of a
 * meeting that ended days ago is readable, not news sent to receivers; a later participant
 * event of it sends revision 2 as usual.
 *
 * The index is retention's (docs/attendance.md#retention): a row goes once the last input
 * stored for it (settle_from) is older than RETENTION_DAYS, as its inputs do.
 */
export class AttendanceHistory1767100000000 implements MigrationInterface {
  name = 'AttendanceHistory1767100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX attendance_settle_from_idx ON attendance (settle_from)`);
    await q.query(`
      INSERT INTO attendance AS a (uuid, account_id, settle_from, published_revision)
      SELECT DISTINCT ON (payload #>> '{payload,object,uuid}')
        payload #>> '{payload,object,uuid}', account_id, received_at, 1
      FROM inbound_events
      WHERE event IN (${ENDED}) AND coalesce(payload #>> '{payload,object,uuid}', '') <> ''
      ORDER BY payload #>> '{payload,object,uuid}', id
      ON CONFLICT (uuid) DO NOTHING`);
  }

  async down(q: QueryRunner): Promise<void> {
    // The rows stay: they are attendance like any other, and the trigger's table keeps them.
    await q.query(`DROP INDEX attendance_settle_from_idx`);
  }
}
