import { MigrationInterface, QueryRunner } from 'typeorm';

/** PROVISIONAL stand-in for the lead's foundation migration (reverted before merging main). */
export class InboundSources1766000000000 implements MigrationInterface {
  name = 'InboundSources1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE inbound_events ADD COLUMN via text NOT NULL DEFAULT 'webhook' CHECK (via IN ('webhook','websocket','reconciliation'))`,
    );
    await q.query(`CREATE TABLE inbound_gaps (
      id uuid PRIMARY KEY DEFAULT uuid_v7(),
      started_at timestamptz NOT NULL,
      ended_at timestamptz NULL,
      reconciliation_id uuid NULL,
      created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(
      `CREATE INDEX inbound_gaps_unreconciled ON inbound_gaps (ended_at) WHERE reconciliation_id IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE inbound_gaps`);
    await q.query(`ALTER TABLE inbound_events DROP COLUMN via`);
  }
}
