import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ordered delivery per meeting (docs/receiving.md#ordered-delivery-per-meeting). webhooks.ordering opts a webhook in; events keep the
 * platform object's uuid (order_key) and the platform's event_ts (order_ts) they were published
 * with; a delivery to an ordered webhook copies both, so the order is read from deliveries
 * alone. Only those deliveries carry a key, so the partial index costs the others nothing.
 * Nullable columns, and a constant default, are added without rewriting the tables.
 */
export class DeliveryOrdering1765000007000 implements MigrationInterface {
  name = 'DeliveryOrdering1765000007000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN ordering text NOT NULL DEFAULT 'none'
          CONSTRAINT webhooks_ordering_ck CHECK (ordering IN ('none', 'meeting'))`);
    await q.query(`ALTER TABLE events ADD COLUMN order_key text, ADD COLUMN order_ts bigint`);
    await q.query(`ALTER TABLE deliveries ADD COLUMN order_key text, ADD COLUMN order_ts bigint`);
    await q.query(`
      CREATE INDEX deliveries_order_idx ON deliveries (webhook_id, order_key, order_ts)
        WHERE order_key IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deliveries_order_idx`);
    await q.query(`ALTER TABLE deliveries DROP COLUMN order_ts, DROP COLUMN order_key`);
    await q.query(`ALTER TABLE events DROP COLUMN order_ts, DROP COLUMN order_key`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN ordering`);
  }
}
