import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run can now end outside the runner: `DELETE /api/reconciliations/:id` cancels it
 * (docs/reconciliation.md#cancelling-a-run), on an API process that cannot publish operational
 * events. Such a run is left `announced = false`, and the runner sends its
 * `bridge.reconciliation.completed` and sets it. Every run before this one was announced.
 */
export class ReconciliationAnnounced1767046133417 implements MigrationInterface {
  name = 'ReconciliationAnnounced1767046133417';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE reconciliation_runs ADD COLUMN announced boolean NOT NULL DEFAULT true`,
    );
    await q.query(`
      CREATE INDEX reconciliation_runs_unannounced_idx ON reconciliation_runs (created_at)
        WHERE NOT announced`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconciliation_runs DROP COLUMN announced`);
  }
}
