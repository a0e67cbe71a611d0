import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Round four's ways in (docs/inbound-sources.md): each stored platform event says how the
 * service learned of it (`via`), and the intervals with no open platform socket are kept as
 * gaps, which must outlive every process, for reconciliation (docs/reconciliation.md). Existing
 * events all came by webhook.
 */
export class InboundSources1766000000000 implements MigrationInterface {
  name = 'InboundSources1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE inbound_events ADD COLUMN via text NOT NULL DEFAULT 'webhook'
        CONSTRAINT inbound_events_via_ck CHECK (via IN ('webhook', 'websocket', 'reconciliation'))`);
    await q.query(`
      CREATE TABLE inbound_gaps (
        id uuid PRIMARY KEY DEFAULT uuid_v7(),
        started_at timestamptz NOT NULL,
        ended_at timestamptz NULL,
        reconciliation_id uuid NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT inbound_gaps_order_ck CHECK (ended_at IS NULL OR ended_at >= started_at)
      )`);
    await q.query(`
      CREATE INDEX inbound_gaps_unreconciled_idx ON inbound_gaps (ended_at)
        WHERE reconciliation_id IS NULL`);
    await q.query(`CREATE INDEX inbound_gaps_started_idx ON inbound_gaps (started_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE inbound_gaps`);
    await q.query(`ALTER TABLE inbound_events DROP COLUMN via`);
  }
}
