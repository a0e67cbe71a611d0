import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index fewer on deliveries: the unique key leads with event_id, so it also serves what
 * deliveries_event_idx served (an event's deliveries, the foreign key's cascade from events),
 * while lookups by webhook use deliveries_webhook_page_idx. Every delivery written and every
 * attempt recorded (a status change cannot be a HOT update) wrote an entry in each index.
 */
export class DeliveryEventKey1764100000019 implements MigrationInterface {
  name = 'DeliveryEventKey1764100000019';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNIQUE INDEX deliveries_event_webhook_uq ON deliveries (event_id, webhook_id)`,
    );
    await q.query(`DROP INDEX deliveries_webhook_event_uq`);
    await q.query(`DROP INDEX deliveries_event_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deliveries_event_idx ON deliveries (event_id)`);
    await q.query(
      `CREATE UNIQUE INDEX deliveries_webhook_event_uq ON deliveries (webhook_id, event_id)`,
    );
    await q.query(`DROP INDEX deliveries_event_webhook_uq`);
  }
}
