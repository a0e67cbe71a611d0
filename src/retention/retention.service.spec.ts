import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { MemoryRetentionStore } from '../../test/fakes/memory-retention';
import { MemoryTables } from '../../test/fakes/memory-stores';
import type { InboundEventEntity } from '../inbound/inbound-event.entity';
import { loadConfig } from '../config/load-config';
import { MetricsService } from '../metrics/metrics.service';
import { RETENTION_BATCH, RetentionService } from './retention.service';
import { RetentionStore, RetentionTable } from './retention.store';

/**
 * The store fake (test/fakes/memory-retention.ts, held to PgRetentionStore by its contract)
 * holding, per table, that many rows older than any cutoff here: deliveries ended, each with two
 * attempts; events none of whose deliveries is left; attendance whose last input is that old.
 */
function storeWith(rows: Record<RetentionTable, number>): MemoryRetentionStore {
  const old = new Date('2026-01-01T00:00:00Z');
  const tables = new MemoryTables();
  const webhook = tables.addWebhook();
  for (let i = 0; i < rows.deliveries; i++) {
    const { id } = tables.addDelivery(webhook.id, {
      status: 'failed',
      createdAt: old,
      completedAt: old,
    });
    for (const attempt of [1, 2]) {
      const result = { ok: false, startedAt: old, durationMs: 1, statusCode: 500 };
      tables.attempts.push({
        deliveryId: id,
        createdAt: old.toISOString(),
        attempt,
        result: { ...result, error: 'HTTP 500', responseBody: '' },
        status: 'failed',
        nextAttemptAt: null,
      });
    }
  }
  for (let i = 0; i < rows.events; i++) {
    const id = randomUUID();
    const event = { id, kind: 'job.started', createdAt: old, data: {}, source: null } as const;
    tables.events.set(id, { ...event, idempotencyKey: null });
  }
  for (let i = 0; i < rows.inbound_events; i++) {
    const id = randomUUID();
    tables.inboundEvents.set(id, { id, receivedAt: old } as InboundEventEntity);
  }
  const store = new MemoryRetentionStore(tables);
  for (let i = 0; i < rows.attendance; i++) {
    store.attendance.push({ uuid: randomUUID(), accountId: null, settleFrom: old, createdAt: old });
  }
  return store;
}

describe('RetentionService', () => {
  const now = new Date('2026-03-01T00:00:00Z');
  const metrics = () => new MetricsService({} as never, {} as never, {} as never);
  const service = (store: RetentionStore) =>
    new RetentionService(loadConfig({ RETENTION_DAYS: '10' }), store, metrics());
  beforeAll(() => Logger.overrideLogger(false));

  it('deletes deliveries, then events, inbound events and attendance older than RETENTION_DAYS, in batches', async () => {
    const store = storeWith({
      deliveries: 2 * RETENTION_BATCH + 5,
      events: 3,
      inbound_events: RETENTION_BATCH,
      attendance: 2,
    });
    const deleted = await service(store).run(now);

    expect(deleted).toEqual({
      deliveries: 2 * RETENTION_BATCH + 5,
      deliveryAttempts: 2 * (2 * RETENTION_BATCH + 5),
      events: 3,
      inboundEvents: RETENTION_BATCH,
      attendance: 2,
    });
    // A full batch is followed by another; a short one ends the table.
    expect(store.calls.map((c) => c.table)).toEqual([
      'deliveries',
      'deliveries',
      'deliveries',
      'events',
      'inbound_events',
      'inbound_events',
      'attendance',
    ]);
    expect(store.calls[0]).toEqual({
      table: 'deliveries',
      cutoff: new Date('2026-02-19T00:00:00Z'),
      limit: RETENTION_BATCH,
    });
  });

  it('makes the partitions PARTITION_DAYS wide, a week ahead or two partitions when wider', async () => {
    const store = storeWith({ deliveries: 0, events: 0, inbound_events: 0, attendance: 0 });
    await service(store).run(now);
    expect(store.made).toEqual([{ until: new Date('2026-03-08T00:00:00Z'), days: 1 }]);
    const wide = storeWith({ deliveries: 0, events: 0, inbound_events: 0, attendance: 0 });
    await new RetentionService(loadConfig({ PARTITION_DAYS: '7' }), wide, metrics()).run(now);
    expect(wide.made).toEqual([{ until: new Date('2026-03-15T00:00:00Z'), days: 7 }]);
  });

  it('does nothing while another process runs it', async () => {
    const store = storeWith({ deliveries: 5, events: 5, inbound_events: 5, attendance: 5 });
    // Another process holds the lock (PostgreSQL's advisory lock, shared by every process).
    store.lock.held = true;
    expect(await service(store).run(now)).toBeNull();
    expect(store.calls).toEqual([]);
  });

  it('stops between two batches on shutdown', async () => {
    const store = storeWith({
      deliveries: 10 * RETENTION_BATCH,
      events: 0,
      inbound_events: 0,
      attendance: 0,
    });
    const sut = service(store);
    store.onBatch = () => {
      if (store.calls.length === 2) void sut.onModuleDestroy();
    };
    await sut.run(now);
    expect(store.calls).toHaveLength(2);
  });
});
