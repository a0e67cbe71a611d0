import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * deliveries.lease_until: a worker claims the deliveries of a delivery job by setting it (one
 * attempt's deadline and a margin) before it sends them, and clears it when it records the
 * attempt. Several deliveries share a Bull job, so the queue can no longer say whether a
 * delivery is held; the sweeper re-queues only pending, due deliveries whose lease is absent
 * or lapsed, and so never re-sends what a live worker holds. A nullable column without a
 * default is added without rewriting the table. Pages keep a fifth free (fillfactor) so the
 * claim, which changes no indexed column, can update in place (HOT) instead of adding an
 * entry to every index.
 */
export class DeliveryLease1764100000017 implements MigrationInterface {
  name = 'DeliveryLease1764100000017';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deliveries ADD COLUMN lease_until timestamptz`);
    await q.query(`ALTER TABLE deliveries SET (fillfactor = 80)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deliveries RESET (fillfactor)`);
    await q.query(`ALTER TABLE deliveries DROP COLUMN lease_until`);
  }
}
