import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { dropExpired, ident, makePartitions } from '../database/partitions';
import { query } from '../database/query';
import { Statement } from './statement';

/** The record's tables the retention job empties, deliveries first (docs/operations.md). */
export type RecordTable = 'deliveries' | 'events';

/** What one batch deleted of the record. */
export interface DeletedRecords {
  deliveries: number;
  deliveryAttempts: number;
  events: number;
}

// Each batch is one short statement (its own transaction) over at most $2 rows, oldest first
// through an index on the creation time. SKIP LOCKED: a row a worker holds (a delivery being
// recorded) is left for the next run instead of making either side wait.
const BATCH_SQL: Record<RecordTable, string> = {
  // Ended deliveries, with their attempts.
  deliveries: `
    WITH batch AS (
      SELECT id FROM deliveries
      WHERE created_at < $1 AND status <> 'pending' AND completed_at < $1
      ORDER BY created_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ),
    a AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM batch) RETURNING 1),
    d AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM batch) RETURNING 1)
    SELECT (SELECT count(*) FROM d)::int AS deliveries,
           (SELECT count(*) FROM a)::int AS delivery_attempts`,
  // Events none of whose deliveries is left: an event with a pending (or a younger) delivery
  // stays until that delivery goes.
  events: `
    WITH batch AS (
      SELECT e.id FROM events e
      WHERE e.created_at < $1
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
      ORDER BY e.created_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ),
    e AS (DELETE FROM events WHERE id IN (SELECT id FROM batch) RETURNING 1)
    SELECT (SELECT count(*) FROM e)::int AS events`,
};

// A platform account that left (docs/accounts.md#leaving): every event of it stored up to $2,
// with all its deliveries (pending ones too: nothing more goes out) and their attempts, in one
// statement. The events' account is their source's; events without a source (the service's
// own) belong to no account.
const ACCOUNT_PURGE_SQL = `
  WITH ev AS (
    SELECT id FROM events
    WHERE source IS NOT NULL AND source->>'account_id' = $1 AND created_at <= $2
  ),
  dl AS (SELECT id FROM deliveries WHERE event_id IN (SELECT id FROM ev)),
  a AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM dl) RETURNING 1),
  d AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM dl) RETURNING 1),
  e AS (DELETE FROM events WHERE id IN (SELECT id FROM ev) RETURNING 1)
  SELECT (SELECT count(*) FROM d)::int AS deliveries,
         (SELECT count(*) FROM a)::int AS delivery_attempts,
         (SELECT count(*) FROM e)::int AS events`;

/** The record's partitioned tables (docs/operations.md#partitions), one time range each. */
export const RECORD_PARTITIONED = ['events', 'deliveries', 'delivery_attempts'];

// A detached day of deliveries keeps its rows while one is pending or ended after the cutoff
// ($1): it is put back, and its ended rows go batch by batch as before.
const DELIVERIES_KEPT_SQL = (partition: string) => `
  SELECT EXISTS (
    SELECT 1 FROM ${partition} WHERE status = 'pending' OR completed_at >= $1
  ) AS kept`;
// A detached day of events is kept while a pending delivery (of any day: a replay's missed
// deliveries come later than their events) still needs one of them.
const EVENTS_KEPT_SQL = (partition: string) => `
  SELECT EXISTS (
    SELECT 1 FROM deliveries d JOIN ${partition} e ON e.id = d.event_id WHERE d.status = 'pending'
  ) AS kept`;
// Publish idempotency keys (event_keys) older than the cutoff, a batch at a time.
const KEYS_BATCH_SQL = `
  WITH k AS (
    DELETE FROM event_keys WHERE idempotency_key IN (
      SELECT idempotency_key FROM event_keys WHERE created_at < $1 LIMIT $2)
    RETURNING 1
  )
  SELECT count(*)::int AS n FROM k`;

export const RECORD_RETENTION_STATEMENTS: Statement[] = [
  ...(['deliveries', 'events'] as const).map((table) => ({
    method: `RecordRetentionStore.deleteBatch('${table}')`,
    sql: BATCH_SQL[table],
  })),
  { method: 'RecordRetentionStore.purgeAccount', sql: ACCOUNT_PURGE_SQL },
  {
    method: 'RecordRetentionStore.dropPartitions (deliveries)',
    sql: DELIVERIES_KEPT_SQL('<partition>'),
  },
  { method: 'RecordRetentionStore.dropPartitions (events)', sql: EVENTS_KEPT_SQL('<partition>') },
  { method: 'RecordRetentionStore.deleteKeysBatch', sql: KEYS_BATCH_SQL },
];

/** The retention job's deletes of the record (RetentionStore runs them). */
@Injectable()
export class RecordRetentionStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Deletes one batch of at most `limit` rows of `table` older than `cutoff`. */
  async deleteBatch(table: RecordTable, cutoff: Date, limit: number): Promise<DeletedRecords> {
    const [row] = await query<{ deliveries?: number; delivery_attempts?: number; events?: number }>(
      this.db,
      BATCH_SQL[table],
      [cutoff, limit],
    );
    return {
      deliveries: row.deliveries ?? 0,
      deliveryAttempts: row.delivery_attempts ?? 0,
      events: row.events ?? 0,
    };
  }

  /** Makes the record's partitions up to `until`, `days` wide (docs/operations.md#partitions). */
  makePartitions(until: Date, days: number): Promise<number> {
    return makePartitions(this.db, RECORD_PARTITIONED, until, days);
  }

  /**
   * Drops each partition wholly older than `cutoff`: the attempts' by time alone, a day of
   * deliveries once none of it is pending or ended after the cutoff, a day of events once no
   * pending delivery needs one of them. What it keeps, the batches delete row by row as before.
   * Each partition is detached concurrently (ingest goes on), checked once out, then dropped.
   */
  async dropPartitions(cutoff: Date): Promise<DeletedRecords> {
    // The three at once, each on a connection of its own: a concurrent detach waits for the
    // transactions under way to end, and their waits overlap.
    const [deliveryAttempts, deliveries, events] = await Promise.all([
      dropExpired(this.db, 'delivery_attempts', cutoff, () => null),
      dropExpired(this.db, 'deliveries', cutoff, (p) => [
        DELIVERIES_KEPT_SQL(ident(p.name)),
        [cutoff],
      ]),
      dropExpired(this.db, 'events', cutoff, (p) => [EVENTS_KEPT_SQL(ident(p.name)), []]),
    ]);
    return { deliveryAttempts, deliveries, events };
  }

  /** Deletes one batch of publish idempotency keys older than `cutoff`; how many. */
  async deleteKeysBatch(cutoff: Date, limit: number): Promise<number> {
    const [row] = await query<{ n: number }>(this.db, KEYS_BATCH_SQL, [cutoff, limit]);
    return row.n;
  }

  /** Deletes the record of a platform account that left, up to when it left. */
  async purgeAccount(accountId: string, upTo: Date): Promise<DeletedRecords> {
    const [row] = await query<{ deliveries: number; delivery_attempts: number; events: number }>(
      this.db,
      ACCOUNT_PURGE_SQL,
      [accountId, upTo],
    );
    return {
      deliveries: row.deliveries,
      deliveryAttempts: row.delivery_attempts,
      events: row.events,
    };
  }
}
