import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notification body moves to the event: every delivery of an event sends the same bytes,
 * so one copy per event is enough, where a fan-out to 1,000 webhooks wrote 1,000; and a
 * delivery's row, updated at its claim and at every attempt, no longer carries the body along
 * with each new row version. Deliveries stored before keep their own body (read first).
 */
export class EventBody1764100000018 implements MigrationInterface {
  name = 'EventBody1764100000018';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN body text`);
    await q.query(`ALTER TABLE deliveries ALTER COLUMN body DROP NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE deliveries d SET body = e.body FROM events e WHERE e.id = d.event_id AND d.body IS NULL`,
    );
    await q.query(`ALTER TABLE deliveries ALTER COLUMN body SET NOT NULL`);
    await q.query(`ALTER TABLE events DROP COLUMN body`);
  }
}
