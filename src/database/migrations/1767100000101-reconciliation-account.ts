import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation per platform account (docs/reconciliation.md#accounts): a run reads one
 * account's reports with that account's token, `account_id` naming an installed account, null
 * the server-to-server one (every run before this one). The index serves the scheduler's "a
 * scheduled run of this account lately?" for each account.
 */
export class ReconciliationAccount1767100000101 implements MigrationInterface {
  name = 'ReconciliationAccount1767100000101';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE reconciliation_runs ADD COLUMN account_id text NULL`);
    await q.query(`
      CREATE INDEX reconciliation_runs_scheduled_idx ON reconciliation_runs (account_id, created_at)
        WHERE trigger = 'schedule'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX reconciliation_runs_scheduled_idx`);
    await q.query(`ALTER TABLE reconciliation_runs DROP COLUMN account_id`);
  }
}
