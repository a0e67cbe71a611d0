import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cursor } from '../../../common/cursor';
import { query } from '../../../database/query';

export const RUN_TRIGGERS = ['manual', 'schedule', 'gap'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'partial', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunChecked {
  meetings: number;
  webinars: number;
  participants: number;
  recordings: number;
}
export interface RunError {
  source: string;
  status: number | null;
  message: string;
}

/** One reconciliation run as recorded. */
export interface Run {
  id: string;
  trigger: RunTrigger;
  since: Date;
  until: Date;
  dryRun: boolean;
  status: RunStatus;
  startedAt: Date | null;
  finishedAt: Date | null;
  checked: RunChecked;
  /** Per platform event name. */
  missing: Record<string, number>;
  created: Record<string, number>;
  errors: RunError[];
  createdAt: Date;
}

/** A run's counters as they stand mid-run, or at its end. */
export interface RunProgress {
  checked: RunChecked;
  missing: Record<string, number>;
  created: Record<string, number>;
  errors: RunError[];
}

interface RunRow {
  id: string;
  trigger: RunTrigger;
  since: Date;
  until: Date;
  dry_run: boolean;
  status: RunStatus;
  started_at: Date | null;
  finished_at: Date | null;
  checked: RunChecked;
  missing: Record<string, number>;
  created: Record<string, number>;
  errors: RunError[];
  created_at: Date;
}

const COLUMNS = `id, trigger, since, until, dry_run, status, started_at, finished_at, checked,
  missing, created, errors, created_at`;

const toRun = (r: RunRow): Run => ({
  id: r.id,
  trigger: r.trigger,
  since: r.since,
  until: r.until,
  dryRun: r.dry_run,
  status: r.status,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  checked: r.checked,
  missing: r.missing,
  created: r.created,
  errors: r.errors,
  createdAt: r.created_at,
});

/**
 * reconciliation_runs, and the reads reconciliation makes of inbound_events and inbound_gaps
 * (which identity keys are stored; which ended gaps wait for their run).
 */
@Injectable()
export class ReconciliationStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(trigger: RunTrigger, since: Date, until: Date, dryRun: boolean): Promise<Run> {
    const [row] = await query<RunRow>(
      this.db,
      `INSERT INTO reconciliation_runs (trigger, since, until, dry_run) VALUES ($1, $2, $3, $4)
       RETURNING ${COLUMNS}`,
      [trigger, since, until, dryRun],
    );
    return toRun(row);
  }

  async get(id: string): Promise<Run | null> {
    const [row] = await query<RunRow>(
      this.db,
      `SELECT ${COLUMNS} FROM reconciliation_runs WHERE id = $1`,
      [id],
    );
    return row ? toRun(row) : null;
  }

  /** Newest first, `limit + 1` rows after `cursor` (see toPage). */
  async list(cursor: Cursor | null, limit: number): Promise<Run[]> {
    const rows = await query<RunRow>(
      this.db,
      `SELECT ${COLUMNS} FROM reconciliation_runs
       WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid)
       ORDER BY created_at DESC, id DESC LIMIT $3`,
      [cursor?.createdAt ?? null, cursor?.id ?? null, limit + 1],
    );
    return rows.map(toRun);
  }

  /**
   * The oldest run not finished, marked running. Only the lease holder asks, so a `running` one
   * is a run whose process died: it is resumed, its `checked` counted again from nothing (the
   * events it created are found stored and not counted twice).
   */
  async start(): Promise<Run | null> {
    const [row] = await query<RunRow>(
      this.db,
      `UPDATE reconciliation_runs SET status = 'running', started_at = coalesce(started_at, now()),
         checked = '{"meetings":0,"webinars":0,"participants":0,"recordings":0}'
       WHERE id = (SELECT id FROM reconciliation_runs WHERE status IN ('queued', 'running')
                   ORDER BY created_at, id LIMIT 1)
       RETURNING ${COLUMNS}`,
      [],
    );
    return row ? toRun(row) : null;
  }

  async progress(id: string, p: RunProgress): Promise<void> {
    await query(
      this.db,
      `UPDATE reconciliation_runs SET checked = $2, missing = $3, created = $4, errors = $5
       WHERE id = $1 AND status = 'running'`,
      [id, p.checked, p.missing, p.created, JSON.stringify(p.errors)],
    );
  }

  async finish(id: string, status: RunStatus, p: RunProgress): Promise<Run | null> {
    const [row] = await query<RunRow>(
      this.db,
      `UPDATE reconciliation_runs SET status = $2, finished_at = now(), checked = $3, missing = $4,
         created = $5, errors = $6
       WHERE id = $1 AND status = 'running' RETURNING ${COLUMNS}`,
      [id, status, p.checked, p.missing, p.created, JSON.stringify(p.errors)],
    );
    return row ? toRun(row) : null;
  }

  /** A scheduled run over the window, unless one was created less than `everyMs` ago. */
  async schedule(since: Date, until: Date, everyMs: number): Promise<Run | null> {
    const [row] = await query<RunRow>(
      this.db,
      `INSERT INTO reconciliation_runs (trigger, since, until)
       SELECT 'schedule', $1, $2
       WHERE NOT EXISTS (SELECT 1 FROM reconciliation_runs
                         WHERE trigger = 'schedule' AND created_at > now() - $3 * interval '1 ms')
       RETURNING ${COLUMNS}`,
      [since, until, everyMs],
    );
    return row ? toRun(row) : null;
  }

  /**
   * A run for each ended WebSocket gap whose end is older than `delayMs` and that has none yet,
   * over [start − 60 s, end + 60 s), the gap marked with it in the same statement.
   */
  async scheduleGaps(delayMs: number): Promise<Run[]> {
    const rows = await query<RunRow>(
      this.db,
      `WITH due AS (
         SELECT id, started_at, ended_at, uuid_v7() AS run_id FROM inbound_gaps
         WHERE reconciliation_id IS NULL AND ended_at IS NOT NULL
           AND ended_at < now() - $1 * interval '1 ms'
         ORDER BY ended_at LIMIT 100 FOR UPDATE SKIP LOCKED
       ),
       marked AS (
         UPDATE inbound_gaps g SET reconciliation_id = due.run_id FROM due WHERE g.id = due.id
       )
       INSERT INTO reconciliation_runs (id, trigger, since, until)
       SELECT run_id, 'gap', started_at - interval '60 s', ended_at + interval '60 s' FROM due
       RETURNING ${COLUMNS}`,
      [delayMs],
    );
    return rows.map(toRun);
  }

  /** Which of these identity keys are stored already. */
  async storedKeys(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await query<{ identity_key: string }>(
      this.db,
      `SELECT identity_key FROM inbound_events WHERE identity_key = ANY($1::text[])`,
      [keys],
    );
    return new Set(rows.map((r) => r.identity_key));
  }
}
