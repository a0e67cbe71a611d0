import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { query } from '../../database/query';
import { MetricsService } from '../../metrics/metrics.service';
import { QUEUES } from '../../queue/queue.constants';
import { Sweeper } from '../../queue/sweeper';
import { DeliverJobData, deliverJobs } from '../publish/delivery-job';
import { DeliverySweepStore } from '../../delivery-record/delivery-sweep.store';

const BATCH = 500;
/** Bounds one sweep: a huge backlog is walked over several sweeps, not in one. */
const MAX_BATCHES_PER_SWEEP = 10;
const SWEEP_LOCK_KEY = 'meeting-event-bridge:deliveries-sweeper';

/**
 * No delivery is lost to Redis: every DELIVERY_SWEEP_INTERVAL_MS a worker re-queues the pending
 * deliveries that have been due for at least one interval and that no worker holds (no lease,
 * or a lapsed one: its worker died mid-attempt). Jobs carry several deliveries and have no ids
 * of their own, so the queue cannot be asked whether it still holds one; a delivery queued
 * twice is claimed by one job only (DeliveryStore.claim), so a re-queue never sends twice
 * what a live worker holds. A delivery that succeeded is never pending, so never re-sent.
 */
@Injectable()
export class DeliveriesSweeper extends Sweeper {
  /** Where the next sweep continues when the last one stopped at its bound. */
  private resumeAfter: { at: Date; id: string } | null = null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue<DeliverJobData>,
    private readonly store: DeliverySweepStore,
    private readonly metrics: MetricsService,
  ) {
    super({
      what: 'due deliveries',
      why: 'that no worker held',
      intervalMs: config.delivery.sweepIntervalMs,
      requeued: metrics.deliveriesRequeued,
    });
  }

  /**
   * One sweep; returns how many deliveries it queued. A PostgreSQL advisory lock keeps it to
   * one worker at a time (another worker's sweep returns 0 at once).
   */
  async sweep(): Promise<number> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      // A transaction-scoped lock: it goes with the transaction, or with the connection if
      // this process dies, and can never stay behind on a pooled connection.
      await runner.startTransaction();
      const [{ locked }] = await query<{ locked: boolean }>(
        runner,
        `SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`,
        [SWEEP_LOCK_KEY],
      );
      if (!locked) {
        this.metrics.deliverySweeps.inc({ outcome: 'skipped' });
        return 0;
      }
      const queued = await this.sweepLocked();
      this.metrics.deliverySweeps.inc({ outcome: 'completed' });
      return queued;
    } catch (error) {
      this.metrics.deliverySweeps.inc({ outcome: 'failed' });
      throw error;
    } finally {
      // Only a read and the lock happened: rolling back ends the transaction and frees the lock.
      if (runner.isTransactionActive) {
        await runner
          .rollbackTransaction()
          .catch((error: Error) => this.logger.warn(`sweep rollback failed: ${error.message}`));
      }
      await runner.release();
    }
  }

  private async sweepLocked(): Promise<number> {
    let queued = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP; batch++) {
      const after = this.resumeAfter;
      const rows = await this.store.due(this.schedule.intervalMs, after, BATCH);
      if (rows.length > 0) await this.queue.addBulk(deliverJobs(rows));
      queued += rows.length;
      const last = rows[rows.length - 1];
      this.resumeAfter = rows.length === BATCH ? { at: last.nextAttemptAt, id: last.id } : null;
      if (this.resumeAfter === null) break;
    }
    return queued;
  }
}
