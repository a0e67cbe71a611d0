import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cursor } from '../../../common/cursor';
import { query } from '../../../database/query';
import type { Statement } from '../../../delivery-record/statement';

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
  /** The installed platform account it reads; null: the server-to-server one. */
  accountId: string | null;
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
  account_id: string | null;
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

/** The key of a run's account among those running at once: '' for the server-to-server one. */
export const runAccountKey = (run: Pick<Run, 'accountId'>): string => run.accountId ?? '';

/** Interruptions of any kind after which a run is ended `failed` (see interrupted). */
export const MAX_INTERRUPTIONS = 3;

const COLUMNS = `id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
  missing, created, errors, created_at`;

const toRun = (r: RunRow): Run => ({
  id: r.id,
  trigger: r.trigger,
  accountId: r.account_id,
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

const CREATE_SQL = `
  INSERT INTO reconciliation_runs (trigger, since, until, dry_run, account_id)
    VALUES ($1, $2, $3, $4, $5)
    RETURNING ${COLUMNS}`;

const GET_SQL = `
  SELECT ${COLUMNS} FROM reconciliation_runs WHERE id = $1`;

const LIST_SQL = `
  SELECT ${COLUMNS} FROM reconciliation_runs
    WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid)
    ORDER BY created_at DESC, id DESC LIMIT $3`;

const START_SQL = `
  UPDATE reconciliation_runs SET status = 'running', started_at = coalesce(started_at, now()),
      checked = '{"meetings":0,"webinars":0,"participants":0,"recordings":0}'
    WHERE id = (SELECT id FROM reconciliation_runs WHERE status IN ('queued', 'running')
                  AND coalesce(account_id, '') <> ALL($1::text[])
                ORDER BY created_at, id LIMIT 1)
    RETURNING ${COLUMNS}`;

const PROGRESS_SQL = `
  UPDATE reconciliation_runs SET checked = $2, missing = $3, created = $4, errors = $5
    WHERE id = $1 AND status = 'running'`;

const FINISH_SQL = `
  UPDATE reconciliation_runs SET status = $2, finished_at = now(), checked = $3, missing = $4,
      created = $5, errors = $6
    WHERE id = $1 AND status = 'running' RETURNING ${COLUMNS}`;

const END_SQL = `
  UPDATE reconciliation_runs SET status = 'failed', finished_at = now(), announced = $3,
      errors = errors || jsonb_build_array(jsonb_build_object(
        'source', 'run', 'status', NULL, 'message', $2::text))
    WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${COLUMNS}`;

const INTERRUPTED_SQL = `
  WITH before AS (
      SELECT id, errors @> $2::jsonb OR (
        SELECT count(*) FROM jsonb_array_elements(errors) e
        WHERE e->>'source' = 'run' AND e->>'message' LIKE 'interrupted: %') >= $3 - 1 AS last
      FROM reconciliation_runs WHERE id = $1 AND status = 'running' FOR UPDATE
    )
    UPDATE reconciliation_runs r
    SET errors = CASE WHEN r.errors @> $2::jsonb THEN r.errors ELSE r.errors || $2::jsonb END,
        status = CASE WHEN before.last THEN 'failed' ELSE r.status END,
        finished_at = CASE WHEN before.last THEN now() ELSE r.finished_at END
    FROM before WHERE r.id = before.id RETURNING ${COLUMNS.replace(/(\w+)/g, 'r.$1')}`;

const STATUS_OF_SQL = `
  SELECT status FROM reconciliation_runs WHERE id = $1`;

const ANNOUNCEABLE_SQL = `
  UPDATE reconciliation_runs SET announced = true
    WHERE id IN (SELECT id FROM reconciliation_runs WHERE NOT announced
                 ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED)
    RETURNING ${COLUMNS}`;

const SCHEDULE_SQL = `
  INSERT INTO reconciliation_runs (trigger, since, until, account_id)
    SELECT 'schedule', $1, $2, a.account_id
    FROM unnest($4::text[]) AS a(account_id)
    WHERE NOT EXISTS (SELECT 1 FROM reconciliation_runs r
                      WHERE r.trigger = 'schedule'
                        AND r.account_id IS NOT DISTINCT FROM a.account_id
                        AND r.created_at > now() - $3 * interval '1 ms')
    RETURNING ${COLUMNS}`;

const SCHEDULE_GAPS_SQL = `
  WITH pending AS (
      SELECT id, started_at, coalesce(ended_at, 'infinity') AS ended_at FROM inbound_gaps
      WHERE reconciliation_id IS NULL ORDER BY started_at, id LIMIT 1000
    ),
    ordered AS (
      SELECT *, max(ended_at) OVER (ORDER BY started_at, id
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
      FROM pending
    ),
    islands AS (
      SELECT id, started_at, ended_at,
        sum(CASE WHEN before IS NULL OR started_at > before + interval '60 s' THEN 1 ELSE 0 END)
          OVER (ORDER BY started_at, id) AS island
      FROM ordered
    ),
    due AS (
      SELECT island, min(started_at) AS since, max(ended_at) AS until, uuid_v7() AS run_id
      FROM islands GROUP BY island
      HAVING max(ended_at) < now() - $1 * interval '1 ms'
    ),
    marked AS (
      UPDATE inbound_gaps g SET reconciliation_id = due.run_id
      FROM islands JOIN due USING (island) WHERE g.id = islands.id
    )
    INSERT INTO reconciliation_runs (id, trigger, since, until)
    SELECT run_id, 'gap', since - interval '60 s', until + interval '60 s' FROM due
    RETURNING ${COLUMNS}`;

const STORED_KEYS_SQL = `
  SELECT identity_key FROM inbound_events WHERE identity_key = ANY($1::text[])`;

export const RECONCILIATION_STATEMENTS: Statement[] = [
  { method: 'ReconciliationStore.create', sql: CREATE_SQL },
  { method: 'ReconciliationStore.get', sql: GET_SQL },
  { method: 'ReconciliationStore.list', sql: LIST_SQL },
  { method: 'ReconciliationStore.start', sql: START_SQL },
  { method: 'ReconciliationStore.progress', sql: PROGRESS_SQL },
  { method: 'ReconciliationStore.finish', sql: FINISH_SQL },
  { method: 'ReconciliationStore.end', sql: END_SQL },
  { method: 'ReconciliationStore.interrupted', sql: INTERRUPTED_SQL },
  { method: 'ReconciliationStore.statusOf', sql: STATUS_OF_SQL },
  { method: 'ReconciliationStore.announceable', sql: ANNOUNCEABLE_SQL },
  { method: 'ReconciliationStore.schedule', sql: SCHEDULE_SQL },
  { method: 'ReconciliationStore.scheduleGaps', sql: SCHEDULE_GAPS_SQL },
  { method: 'ReconciliationStore.storedKeys', sql: STORED_KEYS_SQL },
];

/**
 * reconciliation_runs, and the reads reconciliation makes of inbound_events and inbound_gaps
 * (which identity keys are stored; which ended gaps wait for their run).
 */
@Injectable()
export class ReconciliationStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(
    trigger: RunTrigger,
    since: Date,
    until: Date,
    dryRun: boolean,
    accountId: string | null = null,
  ): Promise<Run> {
    const [row] = await query<RunRow>(this.db, CREATE_SQL, [
      trigger,
      since,
      until,
      dryRun,
      accountId,
    ]);
    return toRun(row);
  }

  async get(id: string): Promise<Run | null> {
    const [row] = await query<RunRow>(this.db, GET_SQL, [id]);
    return row ? toRun(row) : null;
  }

  /** Newest first, `limit + 1` rows after `cursor` (see toPage). */
  async list(cursor: Cursor | null, limit: number): Promise<Run[]> {
    const rows = await query<RunRow>(this.db, LIST_SQL, [
      cursor?.createdAt ?? null,
      cursor?.id ?? null,
      limit + 1,
    ]);
    return rows.map(toRun);
  }

  /**
   * The oldest run not finished of an account not in `busy` (runAccountKey), marked running.
   * Only the lease holder asks, and it names every account it is running, so a `running` one is
   * a run whose process died: it is resumed, its `checked` counted again from nothing (the
   * events it created are found stored and not counted twice).
   */
  async start(busy: string[] = []): Promise<Run | null> {
    const [row] = await query<RunRow>(this.db, START_SQL, [busy]);
    return row ? toRun(row) : null;
  }

  async progress(id: string, p: RunProgress): Promise<void> {
    await query(this.db, PROGRESS_SQL, [
      id,
      p.checked,
      p.missing,
      p.created,
      JSON.stringify(p.errors),
    ]);
  }

  async finish(id: string, status: RunStatus, p: RunProgress): Promise<Run | null> {
    const [row] = await query<RunRow>(this.db, FINISH_SQL, [
      id,
      status,
      p.checked,
      p.missing,
      p.created,
      JSON.stringify(p.errors),
    ]);
    return row ? toRun(row) : null;
  }

  /**
   * Ends a queued or running run `failed`, `message` added to its errors (as source `run`);
   * null when it is not queued nor running. `announced` false leaves the operational event to
   * the runner (announceable): a run ended by the API, which cannot publish it.
   */
  async end(id: string, message: string, announced: boolean): Promise<Run | null> {
    const [row] = await query<RunRow>(this.db, END_SQL, [id, message, announced]);
    return row ? toRun(row) : null;
  }

  /**
   * A run that stopped on an error of its own (not the platform's): `interrupted: <message>`
   * is added to its errors, and it is resumed at the next tick, unless the same interruption
   * is there already: a run that fails the same way twice is ended `failed` (returned then),
   * and so is one interrupted MAX_INTERRUPTIONS times whatever the errors said.
   */
  async interrupted(id: string, message: string): Promise<Run | null> {
    const entry = { source: 'run', status: null, message: `interrupted: ${message}` };
    const [row] = await query<RunRow>(this.db, INTERRUPTED_SQL, [
      id,
      JSON.stringify([entry]),
      MAX_INTERRUPTIONS,
    ]);
    return row && row.status === 'failed' ? toRun(row) : null;
  }

  /** The run's status now (null: no such run). */
  async statusOf(id: string): Promise<RunStatus | null> {
    const [row] = await query<{ status: RunStatus }>(this.db, STATUS_OF_SQL, [id]);
    return row?.status ?? null;
  }

  /** Runs ended outside the runner, marked announced as they are taken (see end). */
  async announceable(): Promise<Run[]> {
    const rows = await query<RunRow>(this.db, ANNOUNCEABLE_SQL, []);
    return rows.map(toRun);
  }

  /**
   * A scheduled run over the window for each of `accounts` (null: the server-to-server one)
   * that had none created less than `everyMs` ago; one statement however many accounts.
   */
  async schedule(
    since: Date,
    until: Date,
    everyMs: number,
    accounts: (string | null)[],
  ): Promise<Run[]> {
    if (accounts.length === 0) return [];
    const rows = await query<RunRow>(this.db, SCHEDULE_SQL, [since, until, everyMs, accounts]);
    return rows.map(toRun);
  }

  /**
   * Runs for ended WebSocket gaps, one per window (docs/reconciliation.md#after-a-socket-gap):
   * gaps not reconciled yet that overlap or lie within a minute of each other are one window,
   * [first start − 60 s, last end + 60 s), due once every gap of it has ended more than
   * `delayMs` ago; its gaps are marked with the run in the same statement. A socket that keeps
   * failing thus gives one run once it is back, never one per gap (the scheduled run still
   * covers the time meanwhile).
   */
  async scheduleGaps(delayMs: number): Promise<Run[]> {
    const rows = await query<RunRow>(this.db, SCHEDULE_GAPS_SQL, [delayMs]);
    return rows.map(toRun);
  }

  /** Which of these identity keys are stored already. */
  async storedKeys(keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await query<{ identity_key: string }>(this.db, STORED_KEYS_SQL, [keys]);
    return new Set(rows.map((r) => r.identity_key));
  }
}
