import { Logger } from '@nestjs/common';
import { loadConfig } from '../config/load-config';
import { MetricsService } from '../metrics/metrics.service';
import { RETENTION_BATCH, RetentionService } from './retention.service';
import { DeletedRows, RetentionStore, RetentionTable } from './retention.store';

/** Old rows per table, deleted a batch at a time, each call recorded. */
class FakeRetentionStore extends RetentionStore {
  readonly calls: { table: RetentionTable; cutoff: Date; limit: number }[] = [];
  lockedElsewhere = false;
  onBatch: () => void = () => undefined;

  constructor(private readonly rows: Record<RetentionTable, number>) {
    super();
  }

  deleteBatch(table: RetentionTable, cutoff: Date, limit: number): Promise<DeletedRows> {
    this.calls.push({ table, cutoff, limit });
    this.onBatch();
    const n = Math.min(limit, this.rows[table]);
    this.rows[table] -= n;
    return Promise.resolve({
      deliveries: table === 'deliveries' ? n : 0,
      deliveryAttempts: table === 'deliveries' ? 2 * n : 0,
      events: table === 'events' ? n : 0,
      inboundEvents: table === 'inbound_events' ? n : 0,
    });
  }

  readonly made: { until: Date; days: number }[] = [];

  makePartitions(until: Date, days: number): Promise<number> {
    this.made.push({ until, days });
    return Promise.resolve(0);
  }

  dropPartitions(): Promise<DeletedRows> {
    return Promise.resolve({ deliveries: 0, deliveryAttempts: 0, events: 0, inboundEvents: 0 });
  }

  deleteKeysBatch(): Promise<number> {
    return Promise.resolve(0);
  }

  purgeAccounts(): Promise<DeletedRows> {
    return Promise.resolve({ deliveries: 0, deliveryAttempts: 0, events: 0, inboundEvents: 0 });
  }

  async exclusively(work: () => Promise<void>): Promise<boolean> {
    if (this.lockedElsewhere) return false;
    await work();
    return true;
  }
}

describe('RetentionService', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const metrics = () => new MetricsService({} as never, {} as never, {} as never);
  const service = (store: RetentionStore) =>
    new RetentionService(loadConfig({ RETENTION_DAYS: '10' }), store, metrics());
  beforeAll(() => Logger.overrideLogger(false));

  it('deletes deliveries, then events, then inbound events older than RETENTION_DAYS, in batches', async () => {
    const store = new FakeRetentionStore({
      deliveries: 2 * RETENTION_BATCH + 5,
      events: 3,
      inbound_events: RETENTION_BATCH,
    });
    const deleted = await service(store).run(now);

    expect(deleted).toEqual({
      deliveries: 2 * RETENTION_BATCH + 5,
      deliveryAttempts: 2 * (2 * RETENTION_BATCH + 5),
      events: 3,
      inboundEvents: RETENTION_BATCH,
    });
    // A full batch is followed by another; a short one ends the table.
    expect(store.calls.map((c) => c.table)).toEqual([
      'deliveries',
      'deliveries',
      'deliveries',
      'events',
      'inbound_events',
      'inbound_events',
    ]);
    expect(store.calls[0]).toEqual({
      table: 'deliveries',
      cutoff: new Date('2026-02-19T00:00:00Z'),
      limit: RETENTION_BATCH,
    });
  });

  it('makes the partitions PARTITION_DAYS wide, a week ahead or two partitions when wider', async () => {
    const store = new FakeRetentionStore({ deliveries: 0, events: 0, inbound_events: 0 });
    await service(store).run(now);
    expect(store.made).toEqual([{ until: new Date('2026-03-08T00:00:00Z'), days: 1 }]);
    const wide = new FakeRetentionStore({ deliveries: 0, events: 0, inbound_events: 0 });
    await new RetentionService(loadConfig({ PARTITION_DAYS: '7' }), wide, metrics()).run(now);
    expect(wide.made).toEqual([{ until: new Date('2026-03-15T00:00:00Z'), days: 7 }]);
  });

  it('does nothing while another process runs it', async () => {
    const store = new FakeRetentionStore({ deliveries: 5, events: 5, inbound_events: 5 });
    store.lockedElsewhere = true;
    expect(await service(store).run(now)).toBeNull();
    expect(store.calls).toEqual([]);
  });

  it('stops between two batches on shutdown', async () => {
    const store = new FakeRetentionStore({
      deliveries: 10 * RETENTION_BATCH,
      events: 0,
      inbound_events: 0,
    });
    const sut = service(store);
    store.onBatch = () => {
      if (store.calls.length === 2) void sut.onModuleDestroy();
    };
    await sut.run(now);
    expect(store.calls).toHaveLength(2);
  });
});
