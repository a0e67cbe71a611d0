import { InjectQueue } from '@nestjs/bull';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { query } from '../database/query';
import { MetricsService } from '../metrics/metrics.service';
import { QUEUES } from '../queue/queue.constants';
import { deliverJob } from './delivery-job';

const BATCH = 500;
/** Bounds one sweep: a huge backlog is walked over several sweeps, not in one. */
const MAX_BATCHES_PER_SWEEP = 10;
const SWEEP_LOCK_KEY = 'meeting-event-bridge:deliveries-sweeper';
/** How many of the deliveries left behind in one batch a log line names. */
const NAMED_IN_LOG = 5;

const DUE_SQL = `
  SELECT id, next_attempt_at FROM deliveries
  WHERE status = 'pending'
    AND next_attempt_at <= now() - make_interval(secs => $1::int / 1000.0)
    AND ($2::timestamptz IS NULL OR (next_attempt_at, id) > ($2::timestamptz, $3::uuid))
  ORDER BY next_attempt_at, id
  LIMIT $4`;

/** What the queue holds for a delivery, as far as the sweeper cares. */
export type QueueState = 'missing' | 'queued' | 'finished';

/** A job Bull has finished (completed or failed for good) has finishedOn set; one still queued, delayed or active has not. */
export function queueStateOf(job: Pick<Job, 'finishedOn'> | null): QueueState {
  if (!job) return 'missing';
  return job.finishedOn ? 'finished' : 'queued';
}

/**
 * No loss: PostgreSQL is the record and the queue only carries work. Every
 * DELIVERY_SWEEP_INTERVAL_MS a worker looks for pending deliveries that have been due for at
 * least one interval and re-queues those the queue does not hold: queueing failed after
 * publish, Redis lost its data, or Bull gave up on a job whose delivery is not final (errors
 * outside the attempt). A finished job left under the delivery's id would block re-adding
 * (job ids are unique), so it is removed first; one Bull will not remove (locked) is logged
 * and left for the next sweep, not counted as re-queued. Jobs still waiting, delayed or
 * active are left alone: an active job of a killed worker returns through Bull's stalled-job
 * check. A delivery that succeeded is never pending, so it is never re-sent from here; a
 * stale job re-added just as its delivery completes finds it final and sends nothing.
 */
@Injectable()
export class DeliveriesSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveriesSweeper.name);
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  /** Where the next sweep continues when the last one stopped at its bound. */
  private resumeAfter: { at: Date; id: string } | null = null;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue,
    private readonly metrics: MetricsService,
  ) {
    this.intervalMs = config.delivery.sweepIntervalMs;
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .catch((error: Error) =>
          this.logger.error(`sweep failed: ${error.message}; next sweep in ${this.intervalMs} ms`),
        )
        .finally(() => {
          this.running = undefined;
          this.schedule();
        });
    }, this.intervalMs);
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
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  private async sweepLocked(): Promise<number> {
    let queued = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP; batch++) {
      const after = this.resumeAfter;
      const rows = await query<{ id: string; next_attempt_at: Date }>(this.db, DUE_SQL, [
        this.intervalMs,
        after?.at ?? null,
        after?.id ?? null,
        BATCH,
      ]);
      queued += await this.requeueMissing(rows.map((r) => r.id));
      const last = rows[rows.length - 1];
      this.resumeAfter = rows.length === BATCH ? { at: last.next_attempt_at, id: last.id } : null;
      if (this.resumeAfter === null) break;
    }
    if (queued > 0) {
      this.metrics.deliveriesRequeued.inc(queued);
      this.logger.warn(`re-queued ${queued} due deliveries that the queue did not hold`);
    }
    return queued;
  }

  /** Queues those of `ids` the queue does not hold; returns how many it really queued. */
  private async requeueMissing(ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const jobs = await Promise.all(ids.map((id) => this.queue.getJob(id)));
    const leftBehind: string[] = [];
    const requeue = (
      await Promise.all(
        ids.map(async (id, i) => {
          const job = jobs[i];
          const state = queueStateOf(job);
          if (state === 'queued') return null;
          if (state === 'finished') {
            try {
              await job!.remove();
            } catch (error) {
              // Bull refuses to remove a locked job (a worker still holds it); an add under the
              // same id would then be a no-op, so this delivery is not queued by this sweep.
              leftBehind.push(`${id}: ${(error as Error).message}`);
              return null;
            }
          }
          return id;
        }),
      )
    ).filter((id): id is string => id !== null);
    if (leftBehind.length > 0) {
      const named = leftBehind.slice(0, NAMED_IN_LOG).join('; ');
      const more =
        leftBehind.length > NAMED_IN_LOG ? ` and ${leftBehind.length - NAMED_IN_LOG} more` : '';
      this.logger.warn(
        `could not remove the finished job of ${leftBehind.length} due deliveries (${named}${more}); ` +
          'left pending for the next sweep',
      );
    }
    if (requeue.length > 0) await this.queue.addBulk(requeue.map(deliverJob));
    return requeue.length;
  }
}
