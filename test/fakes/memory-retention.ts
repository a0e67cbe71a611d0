import { DeletedRows, RetentionStore, RetentionTable } from '../../src/retention/retention.store';
import { MemoryTables } from './memory-stores';

/** The retention lock, as PostgreSQL's advisory lock is: one for every process. */
export class RetentionLock {
  held = false;
}

const none = (): DeletedRows => ({
  deliveries: 0,
  deliveryAttempts: 0,
  events: 0,
  inboundEvents: 0,
  attendance: 0,
});

/**
 * RetentionStore over the in-memory tables of the other store fakes: what PgRetentionStore
 * deletes, held to it by test/stores/retention.store.spec.ts. Each batch is recorded, and
 * `onBatch` runs at each, for a spec to act between two batches.
 */
export class MemoryRetentionStore extends RetentionStore {
  readonly calls: { table: RetentionTable; cutoff: Date; limit: number }[] = [];
  onBatch: () => void = () => undefined;
  /** The accounts that left (account_purges), oldest request first. */
  readonly purges: { accountId: string; requestedAt: Date }[] = [];
  /** The attendance table (attendance/), as retention and a purge see it. */
  readonly attendance: {
    uuid: string;
    accountId: string | null;
    settleFrom: Date;
    createdAt: Date;
  }[] = [];

  constructor(
    readonly tables: MemoryTables = new MemoryTables(),
    readonly lock = new RetentionLock(),
  ) {
    super();
  }

  deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows> {
    this.calls.push({ table, cutoff, limit });
    this.onBatch();
    const deleted = none();
    const t = this.tables;
    const oldest = <T>(rows: T[], at: (row: T) => Date) =>
      rows.sort((a, b) => at(a).getTime() - at(b).getTime()).slice(0, limit);
    if (table === 'deliveries') {
      // Ended deliveries, with their attempts.
      const ended = [...t.deliveries.values()].filter(
        (d) =>
          d.createdAt < cutoff &&
          d.status !== 'pending' &&
          !!d.completedAt &&
          d.completedAt < cutoff,
      );
      Object.assign(deleted, this.deleteDeliveries(oldest(ended, (row) => row.createdAt)));
    } else if (table === 'events') {
      // Events none of whose deliveries is left.
      const used = new Set([...t.deliveries.values()].map((d) => d.eventId));
      const gone = [...t.events.values()].filter((e) => e.createdAt < cutoff && !used.has(e.id));
      for (const e of oldest(gone, (row) => row.createdAt))
        deleted.events += +t.events.delete(e.id);
    } else if (table === 'attendance') {
      // Attendance whose last input is past the cutoff: its inputs are gone, it cannot change.
      const old = oldest(
        this.attendance.filter((row) => row.settleFrom < cutoff),
        (row) => row.settleFrom,
      );
      deleted.attendance = this.dropAttendance((row) => old.includes(row));
    } else {
      const old = [...t.inboundEvents.values()].filter((row) => row.receivedAt < cutoff);
      for (const row of oldest(old, (r) => r.receivedAt)) {
        deleted.inboundEvents += +t.inboundEvents.delete(row.id);
      }
    }
    return Promise.resolve(deleted);
  }

  /** The partitions asked for: the memory tables have none, every row is in the one range. */
  readonly made: { until: Date; days: number }[] = [];

  makePartitions(until: Date, days: number): Promise<number> {
    this.made.push({ until, days });
    return Promise.resolve(0);
  }

  /** No partition lies wholly before a cutoff here: the batches delete every old row. */
  dropPartitions(): Promise<DeletedRows> {
    return Promise.resolve(none());
  }

  /** Memory's unique keys live in its rows, not in key tables beside them. */
  deleteKeysBatch(): Promise<number> {
    return Promise.resolve(0);
  }

  purgeAccounts(): Promise<DeletedRows> {
    const total = none();
    const t = this.tables;
    for (const { accountId, requestedAt } of this.purges.splice(0)) {
      const events = [...t.events.values()].filter(
        (e) => e.source?.account_id === accountId && e.createdAt <= requestedAt,
      );
      const ids = new Set(events.map((e) => e.id));
      const record = this.deleteDeliveries(
        [...t.deliveries.values()].filter((d) => ids.has(d.eventId)),
      );
      total.deliveries += record.deliveries;
      total.deliveryAttempts += record.deliveryAttempts;
      for (const e of events) total.events += +t.events.delete(e.id);
      for (const row of [...t.inboundEvents.values()]) {
        if (row.accountId === accountId && row.receivedAt <= requestedAt) {
          total.inboundEvents += +t.inboundEvents.delete(row.id);
        }
      }
      total.attendance += this.dropAttendance(
        (row) => row.accountId === accountId && row.createdAt <= requestedAt,
      );
    }
    return Promise.resolve(total);
  }

  /** Deletes the attendance rows `gone` picks: how many. */
  private dropAttendance(
    gone: (row: MemoryRetentionStore['attendance'][number]) => boolean,
  ): number {
    const kept = this.attendance.filter((row) => !gone(row));
    const dropped = this.attendance.length - kept.length;
    this.attendance.splice(0, this.attendance.length, ...kept);
    return dropped;
  }

  async exclusively(work: () => Promise<void>): Promise<boolean> {
    if (this.lock.held) return false;
    this.lock.held = true;
    try {
      await work();
    } finally {
      this.lock.held = false;
    }
    return true;
  }

  /** Deletes `rows` with their attempts: how many of each. */
  private deleteDeliveries(rows: { id: string }[]): {
    deliveries: number;
    deliveryAttempts: number;
  } {
    const ids = new Set(rows.map((d) => d.id));
    for (const id of ids) this.tables.deliveries.delete(id);
    const attempts = this.tables.attempts;
    const kept = attempts.filter((a) => !ids.has(a.deliveryId));
    const deliveryAttempts = attempts.length - kept.length;
    attempts.length = 0;
    for (const a of kept) attempts.push(a);
    return { deliveries: ids.size, deliveryAttempts };
  }
}
