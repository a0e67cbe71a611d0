import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bull';
import type { Counter } from 'prom-client';
import { ensureJobs } from './ensure-job';
import { JobSpec } from './queue.constants';

/** How many of the jobs left behind in one sweep a log line names. */
const NAMED_IN_LOG = 5;

export interface SweepSchedule {
  /** What a sweep re-queues, for its log lines: "due deliveries". */
  what: string;
  /** Why they needed it, for the same lines; "that the queue did not hold" unless said. */
  why?: string;
  intervalMs: number;
  /** Counts what the sweeps really re-queued, when there is a metric for it. */
  requeued?: Counter;
  /**
   * `log` where queueing is a sweep's ordinary work (a timer kept in PostgreSQL), not a loss
   * being repaired; `warn` unless said.
   */
  level?: 'warn' | 'log';
}

/**
 * The one shape of a sweeper. PostgreSQL is the record and the queues only carry work, so
 * every `intervalMs` a worker looks for work the record says is not done and queues again
 * what the queue does not hold (queueing failed, Redis lost its data, or Bull gave up on a
 * job). One sweep at a time: the next is scheduled when the last has ended, and shutdown
 * waits for the one running. Each sweep logs and counts what it really re-queued.
 */
export abstract class Sweeper implements OnApplicationBootstrap, OnModuleDestroy {
  protected readonly logger = new Logger(this.constructor.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  protected constructor(protected readonly schedule: SweepSchedule) {}

  /** One sweep; resolves to how many jobs it really queued. */
  abstract sweep(): Promise<number>;

  onApplicationBootstrap(): void {
    this.next();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private next(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweepAndReport().finally(() => {
        this.running = undefined;
        this.next();
      });
    }, this.schedule.intervalMs);
  }

  private async sweepAndReport(): Promise<void> {
    const { what, why = 'that the queue did not hold', intervalMs, requeued } = this.schedule;
    const level = this.schedule.level ?? 'warn';
    try {
      const queued = await this.sweep();
      if (queued === 0) return;
      requeued?.inc(queued);
      this.logger[level](`re-queued ${queued} ${what} ${why}`);
    } catch (error) {
      this.logger.error(
        `sweep for ${what} failed: ${(error as Error).message}; next sweep in ${intervalMs} ms`,
      );
    }
  }

  /**
   * ensureJobs for one batch; returns how many it really queued and logs the finished jobs
   * it could not replace (they stay for the next sweep).
   */
  protected async requeue<T>(queue: Queue<T>, jobs: JobSpec<T>[]): Promise<number> {
    if (jobs.length === 0) return 0;
    const { queued, notRemoved } = await ensureJobs(queue, jobs);
    if (notRemoved.length > 0) {
      const named = notRemoved
        .slice(0, NAMED_IN_LOG)
        .map(({ jobId, reason }) => `${jobId}: ${reason}`)
        .join('; ');
      const more =
        notRemoved.length > NAMED_IN_LOG ? ` and ${notRemoved.length - NAMED_IN_LOG} more` : '';
      this.logger.warn(
        `could not remove the finished job of ${notRemoved.length} ${this.schedule.what} ` +
          `(${named}${more}); left for the next sweep`,
      );
    }
    return queued.length;
  }
}
