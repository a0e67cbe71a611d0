import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { RunChecked, RunError, RunStatus, RunTrigger } from './reconciliation.store';

/**
 * One reconciliation run (docs/reconciliation.md). The store reads and writes it in SQL
 * (reconciliation.store.ts); the entity states the table for the schema check and the CLI.
 */
@Index('reconciliation_runs_list_idx', { synchronize: false })
@Index('reconciliation_runs_pending_idx', { synchronize: false })
@Index('reconciliation_runs_unannounced_idx', { synchronize: false })
@Index('reconciliation_runs_scheduled_idx', { synchronize: false })
@Check('reconciliation_runs_trigger_ck', `trigger IN ('manual', 'schedule', 'gap')`)
@Check(
  'reconciliation_runs_status_ck',
  `status IN ('queued', 'running', 'succeeded', 'partial', 'failed')`,
)
@Check('reconciliation_runs_window_ck', `since < until`)
@Entity('reconciliation_runs')
export class ReconciliationRunEntity {
  // Time-ordered: see src/database/row-id.ts.
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ type: 'text' })
  trigger: RunTrigger;

  /** The installed platform account it reads; null: the server-to-server one. */
  @Column({ name: 'account_id', type: 'text', nullable: true })
  accountId: string | null;

  @Column({ type: 'timestamptz', precision: 3 })
  since: Date;

  @Column({ type: 'timestamptz', precision: 3 })
  until: Date;

  @Column({ name: 'dry_run', type: 'boolean', default: false })
  dryRun: boolean;

  @Column({ type: 'text', default: 'queued' })
  status: RunStatus;

  @Column({ name: 'started_at', type: 'timestamptz', precision: 3, nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', precision: 3, nullable: true })
  finishedAt: Date | null;

  @Column({
    type: 'jsonb',
    default: () => `'{"meetings": 0, "webinars": 0, "recordings": 0, "participants": 0}'`,
  })
  checked: RunChecked;

  /** Per platform event name. */
  @Column({ type: 'jsonb', default: () => `'{}'` })
  missing: Record<string, number>;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  created: Record<string, number>;

  @Column({ type: 'jsonb', default: () => `'[]'` })
  errors: RunError[];

  /** False for a run ended outside the runner (cancelled) until the runner announces it. */
  @Column({ type: 'boolean', default: true })
  announced: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;
}
