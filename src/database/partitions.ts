import { DataSource } from 'typeorm';
import { query } from './query';

/**
 * The time partitions of the history tables (docs/operations.md#partitions), for the module
 * that owns each table: it names its tables, these helpers run the catalog and DDL statements.
 */

/** PostgreSQL's deadlock_detected. */
const DEADLOCK = '40P01';

/** One partition: its name and range; `from` null for the first one (MINVALUE). */
export interface Partition {
  name: string;
  from: Date | null;
  to: Date;
}

/** A partition's name as an SQL identifier (the names hold capitals: 20261207T0000). */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

const PARTITIONS_SQL = `
  SELECT c.relname AS name,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS "from",
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS "to",
    i.inhdetachpending AS pending
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = $1::regclass
  ORDER BY 3`;

/** The partitions of `table`, oldest first (a detach left half done is finished first). */
export async function partitionsOf(db: DataSource, table: string): Promise<Partition[]> {
  const rows = await query<Partition & { pending: boolean }>(db, PARTITIONS_SQL, [table]);
  for (const row of rows.filter((r) => r.pending)) {
    // A DETACH ... CONCURRENTLY interrupted (a crash, a cancel) must be finalized before any other.
    await query(db, `ALTER TABLE ${table} DETACH PARTITION ${ident(row.name)} FINALIZE`, []);
  }
  return rows.map(({ name, from, to }) => ({ name, from, to }));
}

/**
 * Makes the partitions each of `tables` lacks up to `until`, `days` wide after its last one,
 * through the function the migration made (history_partitions_make). One process at a time
 * (a transaction lock), each table briefly locked while a partition is added; a lock wait
 * longer than a second gives up until the next run rather than hold up ingest behind it.
 */
export async function makePartitions(
  db: DataSource,
  tables: string[],
  until: Date,
  days: number,
): Promise<number> {
  return db.transaction(async (tx) => {
    const runner = tx.queryRunner!;
    await query(runner, `SET LOCAL lock_timeout = '1s'`, []);
    await query(
      runner,
      `SELECT pg_advisory_xact_lock(hashtext('meeting-event-bridge:partitions'))`,
      [],
    );
    let made = 0;
    for (const table of tables) {
      const [row] = await query<{ made: number }>(
        runner,
        `SELECT history_partitions_make($1::regclass, $2, make_interval(days => $3)) AS made`,
        [table, until, days],
      );
      made += row.made;
    }
    return made;
  });
}

/**
 * Takes a partition out of its table without a lock that stops inserts or reads of the other
 * partitions (DETACH ... CONCURRENTLY: possible only with no default partition), after which
 * it is a table of its own.
 */
export async function detachPartition(db: DataSource, table: string, name: string): Promise<void> {
  await query(db, `ALTER TABLE ${table} DETACH PARTITION ${ident(name)} CONCURRENTLY`, []);
}

/** The tables `table`'s foreign keys refer to (webhooks, for deliveries). */
const REFERENCED_SQL = `
  SELECT DISTINCT confrelid::regclass::text AS name FROM pg_constraint
  WHERE conrelid = $1::regclass AND contype = 'f' ORDER BY 1`;

/** How many times an attach the database chose as a deadlock's victim is tried again. */
const ATTACH_TRIES = 5;

/**
 * Puts back a detached partition: the CHECK that the detach left spares the scan, and goes
 * once it is attached (kept, it would refuse the rows of a range widened past it).
 *
 * Attaching a partition whose foreign keys refer to another table (deliveries → webhooks) ends
 * by dropping the detached copy's triggers on that table, which takes it ACCESS EXCLUSIVE
 * after a weaker lock: an upgrade in the middle of the statement, which deadlocks with a
 * transaction that read the table and then writes it (creating a webhook). So the referenced
 * tables are locked first, in one order, in the attach's transaction; a writer already holding
 * a lock on them goes ahead of the waiting attach, and a deadlock that still happens (with some
 * other order of locks) is retried: a partition left detached would hide its rows.
 */
export async function attachPartition(
  db: DataSource,
  table: string,
  partition: Partition,
): Promise<void> {
  const from = partition.from ? `'${partition.from.toISOString()}'` : 'MINVALUE';
  for (let attempt = 1; ; attempt++) {
    try {
      await db.transaction(async (tx) => {
        const runner = tx.queryRunner!;
        const referenced = await query<{ name: string }>(runner, REFERENCED_SQL, [table]);
        for (const { name } of referenced) {
          await query(runner, `LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE`, []);
        }
        await query(
          runner,
          `ALTER TABLE ${table} ATTACH PARTITION ${ident(partition.name)} FOR VALUES FROM (${from}) TO ('${partition.to.toISOString()}')`,
          [],
        );
      });
      break;
    } catch (error) {
      if ((error as { code?: unknown }).code !== DEADLOCK || attempt >= ATTACH_TRIES) throw error;
    }
  }
  const checks = await query<{ name: string }>(
    db,
    `SELECT conname AS name FROM pg_constraint
     WHERE conrelid = $1::regclass AND contype = 'c' AND coninhcount = 0`,
    [ident(partition.name)],
  );
  for (const { name } of checks) {
    await query(db, `ALTER TABLE ${ident(partition.name)} DROP CONSTRAINT ${ident(name)}`, []);
  }
}

/** Drops a detached partition: no lock on its former table. */
export async function dropDetached(db: DataSource, name: string): Promise<void> {
  await query(db, `DROP TABLE ${ident(name)}`, []);
}

/** What keeps a detached partition's rows: a statement selecting `kept`, or null for none. */
export type KeptCheck = (partition: Partition) => [sql: string, values: unknown[]] | null;

/**
 * Drops the partitions of `table` wholly older than `cutoff`, each detached concurrently (ingest
 * goes on), checked once out of the table (`kept`: then it is put back), counted and dropped;
 * resolves to the rows dropped. The first partition (from MINVALUE) is never dropped: it is
 * widened over the days dropped, so that the table still takes a row of any past time (none is
 * lost for want of a partition, and retention deletes it row by row as before).
 */
export async function dropExpired(
  db: DataSource,
  table: string,
  cutoff: Date,
  kept: KeptCheck,
): Promise<number> {
  const partitions = await partitionsOf(db, table);
  let rows = 0;
  let dropped = false;
  for (const partition of partitions) {
    if (partition.from === null) continue;
    if (partition.to.getTime() > cutoff.getTime()) break;
    await detachPartition(db, table, partition.name);
    const check = kept(partition);
    if (check) {
      const [row] = await query<{ kept: boolean }>(db, check[0], check[1]);
      if (row.kept) {
        await attachPartition(db, table, partition);
        continue;
      }
    }
    const [{ n }] = await query<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM ${ident(partition.name)}`,
      [],
    );
    await dropDetached(db, partition.name);
    rows += n;
    dropped = true;
  }
  const first = partitions.find((p) => p.from === null);
  const next = (await partitionsOf(db, table)).find((p) => p.from !== null);
  if (dropped && first && next && next.from!.getTime() > first.to.getTime()) {
    // The CHECK that DETACH ... CONCURRENTLY leaves implies the wider bound: no scan.
    await detachPartition(db, table, first.name);
    await attachPartition(db, table, { ...first, to: next.from! });
  }
  return rows;
}
