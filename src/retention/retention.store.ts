import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AttendanceStore } from '../attendance/attendance.store';
import { dropExpired, makePartitions } from '../database/partitions';
import { query } from '../database/query';
import { RecordRetentionStore, RecordTable } from '../delivery-record/record-retention.store';

/** What one batch of the retention job deleted. */
export interface DeletedRows {
  deliveries: number;
  deliveryAttempts: number;
  events: number;
  inboundEvents: number;
  attendance: number;
}

export type RetentionTable = RecordTable | 'inbound_events' | 'attendance';

// One short statement (its own transaction) over at most $2 rows, oldest first through
// received_at's index; SKIP LOCKED leaves a row in use for the next run.
const INBOUND_BATCH_SQL = `
    WITH batch AS (
      SELECT id FROM inbound_events
      WHERE received_at < $1
      ORDER BY received_at
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    ),
    i AS (DELETE FROM inbound_events WHERE id IN (SELECT id FROM batch) RETURNING 1)
    SELECT (SELECT count(*) FROM i)::int AS inbound_events`;

// The accounts that left (docs/accounts.md#leaving), with when: their inbound events up to
// then go here, the record's through RecordRetentionStore, attendance through AttendanceStore
// (each table deleted by the module that owns it); the request goes last.
const PURGES_SQL = `SELECT account_id, requested_at FROM account_purges ORDER BY requested_at`;
const INBOUND_PURGE_SQL = `
  WITH i AS (DELETE FROM inbound_events WHERE account_id = $1 AND received_at <= $2 RETURNING 1)
  SELECT (SELECT count(*) FROM i)::int AS inbound_events`;
const PURGED_SQL = `DELETE FROM account_purges WHERE account_id = $1 AND requested_at = $2`;

// The dedupe keys of platform events (inbound_event_keys) older than the cutoff, a batch at a time.
const INBOUND_KEYS_BATCH_SQL = `
  WITH k AS (
    DELETE FROM inbound_event_keys WHERE identity_key IN (
      SELECT identity_key FROM inbound_event_keys WHERE received_at < $1 LIMIT $2)
    RETURNING 1
  )
  SELECT count(*)::int AS n FROM k`;

const LOCK_KEY = 'meeting-event-bridge:retention';

/** The retention job's deletes (PgRetentionStore is the real one). */
export abstract class RetentionStore {
  /** Deletes one batch of at most `limit` rows of `table` older than `cutoff`. */
  abstract deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows>;

  /** Makes the history tables' partitions up to `until`, `days` wide; how many it made. */
  abstract makePartitions(until: Date, days: number): Promise<number>;

  /** Drops the partitions wholly older than `cutoff` (what they held may stay: see the stores). */
  abstract dropPartitions(cutoff: Date): Promise<DeletedRows>;

  /** Deletes one batch of at most `limit` dedupe and idempotency keys older than `cutoff`. */
  abstract deleteKeysBatch(cutoff: Date, limit: number): Promise<number>;

  /** Deletes the stored data of every platform account that left; what it deleted. */
  abstract purgeAccounts(): Promise<DeletedRows>;

  /**
   * Runs `work` while this process holds the retention lock; resolves to false at once, without
   * running it, when another process holds it.
   */
  abstract exclusively(work: () => Promise<void>): Promise<boolean>;
}

@Injectable()
export class PgRetentionStore extends RetentionStore {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly record: RecordRetentionStore,
    private readonly attendance: AttendanceStore,
  ) {
    super();
  }

  /** The record's tables and attendance through the modules that own them. */
  async deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows> {
    if (table === 'attendance') {
      const attendance = await this.attendance.deleteExpired(cutoff, limit);
      return { deliveries: 0, deliveryAttempts: 0, events: 0, inboundEvents: 0, attendance };
    }
    if (table !== 'inbound_events') {
      const record = await this.record.deleteBatch(table, cutoff, limit);
      return { ...record, inboundEvents: 0, attendance: 0 };
    }
    const [row] = await query<{ inbound_events: number }>(this.db, INBOUND_BATCH_SQL, [
      cutoff,
      limit,
    ]);
    return {
      deliveries: 0,
      deliveryAttempts: 0,
      events: 0,
      inboundEvents: row.inbound_events,
      attendance: 0,
    };
  }

  async makePartitions(until: Date, days: number): Promise<number> {
    return (
      (await this.record.makePartitions(until, days)) +
      (await makePartitions(this.db, ['inbound_events'], until, days))
    );
  }

  async dropPartitions(cutoff: Date): Promise<DeletedRows> {
    // Inbound events go by time alone: a partition wholly older than the cutoff is all expired.
    const [record, inboundEvents] = await Promise.all([
      this.record.dropPartitions(cutoff),
      dropExpired(this.db, 'inbound_events', cutoff, () => null),
    ]);
    return { ...record, inboundEvents, attendance: 0 };
  }

  async deleteKeysBatch(cutoff: Date, limit: number): Promise<number> {
    const [row] = await query<{ n: number }>(this.db, INBOUND_KEYS_BATCH_SQL, [cutoff, limit]);
    return row.n + (await this.record.deleteKeysBatch(cutoff, limit));
  }

  async purgeAccounts(): Promise<DeletedRows> {
    const total: DeletedRows = {
      deliveries: 0,
      deliveryAttempts: 0,
      events: 0,
      inboundEvents: 0,
      attendance: 0,
    };
    const purges = await query<{ account_id: string; requested_at: Date }>(this.db, PURGES_SQL, []);
    for (const { account_id: accountId, requested_at: upTo } of purges) {
      const record = await this.record.purgeAccount(accountId, upTo);
      const [inbound] = await query<{ inbound_events: number }>(this.db, INBOUND_PURGE_SQL, [
        accountId,
        upTo,
      ]);
      // After its inputs: attendance rows are made only by storing inbound events.
      const attendance = await this.attendance.deleteForAccount(accountId, upTo);
      // Only the request it served: a newer one (the account left again meanwhile) stays.
      await query(this.db, PURGED_SQL, [accountId, upTo]);
      total.deliveries += record.deliveries;
      total.deliveryAttempts += record.deliveryAttempts;
      total.events += record.events;
      total.inboundEvents += inbound.inbound_events;
      total.attendance += attendance;
    }
    return total;
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
