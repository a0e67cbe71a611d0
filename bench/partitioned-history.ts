/**
 * The historical rows of bench/partitions.ts, made as fast as PostgreSQL takes them and kept
 * across runs: each day of history fills the four tables' partitions of that day, which are
 * detached, stripped of their indexes and keys, filled with one INSERT … SELECT each, indexed
 * again and put back (ATTACH then finds its indexes made and a CHECK that spares its scan);
 * two days at a time, on connections with synchronous_commit off. The tables stay logged: the
 * bench measures them as the service has them. A day already there (bench_history_days says
 * how many events it holds, and its partitions exist) is not made again, so a database kept
 * with --reuse is generated once; the day a run dropped is made again by the next.
 */
import { DataSource, QueryRunner } from 'typeorm';
import {
  Partition,
  attachPartition,
  dropExpired,
  ident,
  partitionsOf,
} from '../src/database/partitions';

const DAY_MS = 86_400_000;
/** Days made at once, each on a connection of its own. */
const WORKERS = 2;
/** The history tables with their partition keys (the migration's), in the order made. */
const TABLES = [
  { table: 'events', column: 'created_at' },
  { table: 'deliveries', column: 'created_at' },
  { table: 'delivery_attempts', column: 'started_at' },
  { table: 'inbound_events', column: 'received_at' },
] as const;
type Table = (typeof TABLES)[number]['table'];

export interface HistoryShape {
  days: number;
  /** Events a day; each has a delivery per webhook, an attempt each, and an inbound event. */
  perDay: number;
  /** The inactive webhooks the deliveries went to. */
  webhookIds: string[];
}

/** The UTC midnights of the `days` days before today, oldest last. */
const pastDays = (days: number): Date[] => {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => new Date(today - (i + 1) * DAY_MS));
};

/** A day partition's name as the service makes it (history_partitions_make). */
const partitionName = (table: string, day: Date): string =>
  `${table}_p${day.toISOString().slice(0, 10).replace(/-/g, '')}T0000`;

/** Makes `table`'s partition of the day starting at `from` (ms), instead of what a stopped run left. */
async function newDayPartition(db: DataSource, table: Table, from: number): Promise<void> {
  const name = ident(partitionName(table, new Date(from)));
  // Taken out by a run stopped halfway through the day: not the table's any more.
  await db.query(`DROP TABLE IF EXISTS ${name}`);
  await db.query(
    `CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES
     FROM ('${new Date(from).toISOString()}') TO ('${new Date(from + DAY_MS).toISOString()}')`,
  );
}

/**
 * Gives `day` a partition of its own in `table`: a day dropped by an earlier run lies in the
 * first partition, which retention widened over it; that one is narrowed back (it holds
 * nothing as new) and the days between get their partitions again.
 */
async function partitionFor(db: DataSource, table: Table, column: string, day: Date) {
  const partitions = await partitionsOf(db, table);
  const own = partitions.find((p) => p.from?.getTime() === day.getTime());
  if (own) return own;
  const first = partitions.find((p) => p.from === null);
  if (first && first.to.getTime() > day.getTime()) {
    const [{ n }] = (await db.query(
      `SELECT count(*)::int AS n FROM ${ident(first.name)} WHERE ${column} >= $1`,
      [day],
    )) as { n: number }[];
    if (n > 0) throw new Error(`${first.name} holds ${n} rows of ${day.toISOString()} or later`);
    await db.query(`ALTER TABLE ${table} DETACH PARTITION ${ident(first.name)}`);
    await attachPartition(db, table, { ...first, to: day });
    for (let from = day.getTime(); from < first.to.getTime(); from += DAY_MS) {
      await newDayPartition(db, table, from);
    }
  } else {
    await newDayPartition(db, table, day.getTime());
  }
  return (await partitionsOf(db, table)).find((p) => p.from?.getTime() === day.getTime())!;
}

/**
 * Takes a day's partition out of its table and drops its indexes and keys (their definitions
 * returned, to make them again once it is filled); the foreign key is left to ATTACH, which
 * copies it from the table and checks it in one query.
 */
async function strip(runner: QueryRunner, table: Table, partition: Partition) {
  const name = ident(partition.name);
  await runner.query(`ALTER TABLE ${table} DETACH PARTITION ${name}`);
  await runner.query(`TRUNCATE ${name}`);
  const keys = (await runner.query(
    `SELECT conname AS name, contype AS type, pg_get_constraintdef(oid) AS def
     FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('p', 'f')`,
    [name],
  )) as { name: string; type: 'p' | 'f'; def: string }[];
  for (const key of keys) {
    await runner.query(`ALTER TABLE ${name} DROP CONSTRAINT ${ident(key.name)}`);
  }
  const indexes = (await runner.query(
    `SELECT c.relname AS name, pg_get_indexdef(x.indexrelid) AS def
     FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = $1::regclass`,
    [name],
  )) as { name: string; def: string }[];
  for (const index of indexes) await runner.query(`DROP INDEX ${ident(index.name)}`);
  return async (column: string) => {
    for (const index of indexes) await runner.query(index.def);
    for (const key of keys.filter((k) => k.type === 'p')) {
      await runner.query(`ALTER TABLE ${name} ADD CONSTRAINT ${ident(key.name)} ${key.def}`);
    }
    await runner.query(`VACUUM ANALYZE ${name}`);
    // Implies the partition's bound: ATTACH needs no scan (attachPartition drops it after).
    await runner.query(
      `ALTER TABLE ${name} ADD CONSTRAINT ${ident(`${partition.name}_bound`)} CHECK (
         ${column} IS NOT NULL AND ${column} >= '${partition.from!.toISOString()}'
         AND ${column} < '${partition.to.toISOString()}')`,
    );
  };
}

/** One day of history into its four partitions, on `runner`'s connection. */
async function makeDay(
  db: DataSource,
  runner: QueryRunner,
  day: Date,
  partitions: Record<Table, Partition>,
  { perDay, webhookIds }: HistoryShape,
): Promise<void> {
  const restore: [Table, string, (column: string) => Promise<void>][] = [];
  for (const { table, column } of TABLES) {
    restore.push([table, column, await strip(runner, table, partitions[table])]);
  }
  const p = (table: Table) => ident(partitions[table].name);
  // Spread over the day from 01:00, 79 ms apart while the day holds them.
  const stepMs = Math.min(79, Math.floor((22 * 3_600_000) / perDay));
  const at = (g: string) => `$1::timestamptz + interval '1 hour' + ${g} * interval '${stepMs} ms'`;
  await runner.query(
    `INSERT INTO ${p('events')} (id, kind, data, created_at)
     SELECT uuid_v7(), 'operation.failed', '{"error":"x"}', ${at('g')}
     FROM generate_series(1, $2) g`,
    [day, perDay],
  );
  await runner.query(
    `INSERT INTO ${p('deliveries')} (id, webhook_id, event_id, event, status, attempt_count,
                                     created_at, completed_at, last_status_code)
     SELECT uuid_v7(), w.id, e.id, e.kind, 'failed', 1, e.created_at, e.created_at, 500
     FROM ${p('events')} e CROSS JOIN unnest($1::uuid[]) AS w(id)`,
    [webhookIds],
  );
  await runner.query(
    `INSERT INTO ${p('delivery_attempts')} (delivery_id, attempt, started_at, duration_ms,
                                            status_code, error)
     SELECT id, 1, created_at, 12, 500, 'HTTP 500' FROM ${p('deliveries')}`,
  );
  // The dedupe keys the table's insert trigger would have written, had the rows gone through it.
  const keyOf = `'bench-${day.toISOString().slice(0, 10)}-' || g`;
  await runner.query(
    `INSERT INTO ${p('inbound_events')} (id, event, identity_key, payload, received_at)
     SELECT uuid_v7(), 'meeting.started', ${keyOf}, '{"payload":{}}', ${at('g')}
     FROM generate_series(1, $2) g`,
    [day, perDay],
  );
  await runner.query(
    `INSERT INTO inbound_event_keys (identity_key, received_at)
     SELECT identity_key, received_at FROM ${p('inbound_events')}
     ON CONFLICT (identity_key) DO NOTHING`,
  );
  for (const [table, column, back] of restore) {
    await back(column);
    await attachPartition(db, table, partitions[table]);
  }
  await runner.query(
    `INSERT INTO bench_history_days (day, events) VALUES ($1, $2)
     ON CONFLICT (day) DO UPDATE SET events = excluded.events`,
    [day, perDay],
  );
}

/**
 * Makes the days of history the database lacks; resolves to how many it made (0: every day
 * was there, from an earlier run on this database).
 */
export async function makeHistory(db: DataSource, shape: HistoryShape): Promise<number> {
  await db.query(
    `CREATE TABLE IF NOT EXISTS bench_history_days (day timestamptz PRIMARY KEY, events int NOT NULL)`,
  );
  const made = (await db.query(`SELECT day, events FROM bench_history_days`)) as {
    day: Date;
    events: number;
  }[];
  const days = pastDays(shape.days);
  // Days older than these (a database kept from an earlier date) go, so that the bench's drop
  // of the oldest day drops one day.
  for (const { table } of TABLES) await dropExpired(db, table, days[days.length - 1], () => null);
  const todo: { day: Date; partitions: Record<Table, Partition> }[] = [];
  // One at a time: a day dropped before changes the first partition of each table.
  for (const day of days) {
    const existing = await Promise.all(
      TABLES.map(async ({ table }) =>
        (await partitionsOf(db, table)).some((p) => p.from?.getTime() === day.getTime()),
      ),
    );
    const marked = made.find((m) => m.day.getTime() === day.getTime());
    if (marked?.events === shape.perDay && existing.every(Boolean)) continue;
    const partitions = {} as Record<Table, Partition>;
    for (const { table, column } of TABLES) {
      partitions[table] = await partitionFor(db, table, column, day);
    }
    todo.push({ day, partitions });
  }
  const runners = await Promise.all(
    Array.from({ length: Math.min(WORKERS, todo.length) }, async () => {
      const runner = db.createQueryRunner();
      await runner.connect();
      await runner.query(`SET synchronous_commit = off`);
      await runner.query(`SET maintenance_work_mem = '256MB'`);
      return runner;
    }),
  );
  try {
    let next = 0;
    await Promise.all(
      runners.map(async (runner) => {
        while (next < todo.length) {
          const { day, partitions } = todo[next++];
          await makeDay(db, runner, day, partitions, shape);
        }
      }),
    );
  } finally {
    for (const runner of runners) await runner.release();
  }
  if (todo.length > 0) await db.query(`ANALYZE ${TABLES.map((t) => t.table).join(', ')}`);
  return todo.length;
}
