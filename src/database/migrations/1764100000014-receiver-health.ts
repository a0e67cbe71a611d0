import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery control and receiver health (docs/api.md#receiver-health): why and when a webhook was disabled and its
 * run of failed deliveries; where a delivery's current series of attempts began and what
 * re-queued it; the indexes that the replay and retention queries read.
 */
export class ReceiverHealth1764100000014 implements MigrationInterface {
  name = 'ReceiverHealth1764100000014';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN disabled_reason text
          CONSTRAINT webhooks_disabled_reason_check CHECK (disabled_reason IN ('gone', 'failing')),
        ADD COLUMN disabled_at timestamptz,
        ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0`);
    await q.query(`
      ALTER TABLE deliveries
        ADD COLUMN series_start integer NOT NULL DEFAULT 0,
        ADD COLUMN requeued_by text
          CONSTRAINT deliveries_requeued_by_check CHECK (requeued_by IN ('redeliver', 'replay', 'missed')),
        ADD COLUMN requeued_at timestamptz`);
    // One delivery per webhook and event: a replay of missed events creates each once.
    await q.query(
      `CREATE UNIQUE INDEX deliveries_webhook_event_uq ON deliveries (webhook_id, event_id)`,
    );
    // Retention walks the oldest rows first.
    await q.query(`CREATE INDEX deliveries_created_idx ON deliveries (created_at)`);
    await q.query(`CREATE INDEX events_created_idx ON events (created_at)`);
    await q.query(`CREATE INDEX inbound_events_received_idx ON inbound_events (received_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX inbound_events_received_idx`);
    await q.query(`DROP INDEX events_created_idx`);
    await q.query(`DROP INDEX deliveries_created_idx`);
    await q.query(`DROP INDEX deliveries_webhook_event_uq`);
    await q.query(
      `ALTER TABLE deliveries DROP COLUMN requeued_at, DROP COLUMN requeued_by, DROP COLUMN series_start`,
    );
    await q.query(
      `ALTER TABLE webhooks DROP COLUMN consecutive_failures, DROP COLUMN disabled_at, DROP COLUMN disabled_reason`,
    );
  }
}
