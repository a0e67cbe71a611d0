import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';

/** What one batch of the retention job deleted. */
export interface DeletedRows {
  deliveries: number;
  deliveryAttempts: number;
  events: number;
  inboundEvents: number;
}

export type RetentionTable = 'deliveries' | 'events' | 'inbound_events';

// Each batch is one short statement (its own transaction) over at most $2 rows, oldest first
// through an index on the creation time. SKIP LOCKED: a row a worker holds (a delivery being
// recorded) is left for the next run instead of making either side wait.
const BATCH_SQL: Record<RetentionTable, string> = {
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
  inbound_events: `
    WITH batch AS (
      SELECT id FROM inbound_events
      WHERE received_at < $1
      ORDER BY received_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ),
    i AS (DELETE FROM inbound_events WHERE id IN (SELECT id FROM batch) RETURNING 1)
    SELECT (SELECT count(*) FROM i)::int AS inbound_events`,
};

interface BatchRow {
  deliveries?: number;
  delivery_attempts?: number;
  events?: number;
  inbound_events?: number;
}

const LOCK_KEY = 'meeting-event-bridge:retention';

/** The retention job's deletes (PgRetentionStore is the real one). */
export abstract class RetentionStore {
  /** Deletes one batch of at most `limit` rows of `table` older than `cutoff`. */
  abstract deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows>;

  /**
   * Runs `work` while this process holds the retention lock; resolves to false at once, without
   * running it, when another process holds it.
   */
  abstract exclusively(work: () => Promise<void>): Promise<boolean>;
}

@Injectable()
export class PgRetentionStore extends RetentionStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows> {
    const [row] = await query<BatchRow>(this.db, BATCH_SQL[table], [cutoff, limit]);
    return {
      deliveries: row.deliveries ?? 0,
      deliveryAttempts: row.delivery_attempts ?? 0,
      events: row.events ?? 0,
      inboundEvents: row.inbound_events ?? 0,
    };
  }

  async exclusively(work: () => Promise<void>): Promise<boolean> {
    // A session lock on a connection of its own, held across the batches (each batch commits
    // on its own); it goes with the connection if this process dies.
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = await query<{ locked: boolean }>(
        runner,
        `SELECT pg_try_advisory_lock(hashtext($1)) AS locked`,
        [LOCK_KEY],
      );
      if (!locked) return false;
      try {
        await work();
      } finally {
        await query(runner, `SELECT pg_advisory_unlock(hashtext($1))`, [LOCK_KEY]);
      }
      return true;
    } finally {
      await runner.release();
    }
  }
}
