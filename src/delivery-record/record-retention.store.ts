import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
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

export const RECORD_RETENTION_STATEMENTS: Statement[] = [
  ...(['deliveries', 'events'] as const).map((table) => ({
    method: `RecordRetentionStore.deleteBatch('${table}')`,
    sql: BATCH_SQL[table],
  })),
  { method: 'RecordRetentionStore.purgeAccount', sql: ACCOUNT_PURGE_SQL },
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
