import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation runs (docs/reconciliation.md): what each run was asked (trigger, window, dry
 * run), how it went, and what it checked, found missing and created per platform event, with
 * its errors per source. The runner takes the oldest `queued` run; `running` ones are those a
 * dead process left, resumed by the next lease holder. The list is read newest first.
 */
export class ReconciliationRuns1766000100000 implements MigrationInterface {
  name = 'ReconciliationRuns1766000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reconciliation_runs (
        id uuid PRIMARY KEY DEFAULT uuid_v7(),
        trigger text NOT NULL CONSTRAINT reconciliation_runs_trigger_ck
          CHECK (trigger IN ('manual', 'schedule', 'gap')),
        since timestamptz(3) NOT NULL,
        until timestamptz(3) NOT NULL,
        dry_run boolean NOT NULL DEFAULT false,
        status text NOT NULL DEFAULT 'queued' CONSTRAINT reconciliation_runs_status_ck
          CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed')),
        started_at timestamptz(3) NULL,
        finished_at timestamptz(3) NULL,
        checked jsonb NOT NULL DEFAULT '{"meetings":0,"webinars":0,"participants":0,"recordings":0}',
        missing jsonb NOT NULL DEFAULT '{}',
        created jsonb NOT NULL DEFAULT '{}',
        errors jsonb NOT NULL DEFAULT '[]',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT reconciliation_runs_window_ck CHECK (since < until)
      )`);
    await q.query(
      `CREATE INDEX reconciliation_runs_list_idx ON reconciliation_runs (created_at DESC, id DESC)`,
    );
    await q.query(`
      CREATE INDEX reconciliation_runs_pending_idx ON reconciliation_runs (created_at)
        WHERE status IN ('queued', 'running')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE reconciliation_runs`);
  }
}
