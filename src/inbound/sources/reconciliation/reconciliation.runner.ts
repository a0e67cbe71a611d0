import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { withTimeout } from '../../../common/with-timeout';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { OperationalEventsService } from '../../../dispatcher/operational-events/operational-events.service';
import { ReconcileRedis } from './reconcile-redis';
import { Run, ReconciliationStore } from './reconciliation.store';
import { RunExecutor } from './run-executor';

/** How long the run lease lasts unless renewed: a dead holder's run is taken over after it. */
export const LEASE_MS = 15_000;
/** How often a process looks for work (and the holder renews its lease). */
const TICK_MS = 1000;
/** Longest wait for Redis while the process stops. */
const SHUTDOWN_WAIT_MS = 2000;

/**
 * The one reconciliation runner of the deployment (worker role): every process ticks, the one
 * holding the Redis lease creates the scheduled runs and those of ended WebSocket gaps, and
 * runs the queued ones oldest first, one at a time. A run whose process died (left `running`)
 * is resumed by the next holder. A holder that loses its lease stops its run at once.
 */
@Injectable()
export class ReconciliationRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReconciliationRunner.name);
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private current: AbortController | null = null;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lease: ReconcileRedis,
    private readonly store: ReconciliationStore,
    private readonly executor: RunExecutor,
    private readonly operational: OperationalEventsService,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      if (this.ticking === null) this.ticking = this.tick().finally(() => (this.ticking = null));
    }, TICK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.current?.abort(new Error('the process is stopping'));
    // Bounded: with Redis away a lease command waits for its return, and the drain would wait
    // for it past SHUTDOWN_TIMEOUT_MS. The run stays `running` either way: the next holder
    // resumes it, and an unreleased lease lapses on its own.
    await withTimeout(
      (this.ticking ?? Promise.resolve()).then(() => this.lease.release()),
      SHUTDOWN_WAIT_MS,
      'the reconciliation lease was not released',
    ).catch((error: Error) => this.logger.warn(`${error.message}: it lapses on its own`));
  }

  private async tick(): Promise<void> {
    try {
      if (this.stopped || !(await this.lease.hold(LEASE_MS))) return;
      await this.plan();
      for (let run = await this.store.start(); run !== null && !this.stopped;) {
        await this.runHeld(run);
        run = this.stopped ? null : await this.store.start();
      }
    } catch (error) {
      this.logger.error(`reconciliation runner: ${(error as Error).message}`);
    }
  }

  /** The scheduled run when due, and a run per ended gap. */
  private async plan(): Promise<void> {
    const { intervalMs, lookbackMs, settleMs, gapDelayMs } = this.config.reconcile;
    if (intervalMs > 0) {
      const now = Date.now();
      const run = await this.store.schedule(
        new Date(now - lookbackMs),
        new Date(now - settleMs),
        intervalMs,
      );
      if (run) this.logger.log(`scheduled reconciliation ${run.id}`);
    }
    for (const run of await this.store.scheduleGaps(gapDelayMs)) {
      this.logger.log(`reconciliation ${run.id} of a WebSocket gap`);
    }
  }

  /** Runs `run` while renewing the lease; aborts it the moment the lease is lost. */
  private async runHeld(run: Run): Promise<void> {
    const controller = new AbortController();
    this.current = controller;
    const renew = setInterval(() => {
      this.lease
        .hold(LEASE_MS)
        .then((held) => held || controller.abort(new Error('the run lease was lost')))
        .catch((error: Error) => controller.abort(error));
    }, LEASE_MS / 3);
    try {
      const { status, tally } = await this.executor.execute(run, controller.signal);
      const ended = await this.store.finish(run.id, status, tally);
      if (ended) await this.completed(ended);
    } catch (error) {
      if (controller.signal.aborted) {
        this.logger.warn(`reconciliation ${run.id} stopped: ${(error as Error).message}`);
        return;
      }
      // Not the platform (that ends it `failed` in the executor): PostgreSQL or Redis. The run
      // stays `running` and is resumed at the next tick.
      this.logger.error(`reconciliation ${run.id} interrupted: ${(error as Error).message}`);
      throw error;
    } finally {
      clearInterval(renew);
      this.current = null;
    }
  }

  private completed(run: Run): Promise<void> {
    return this.operational.reconciliationCompleted({
      id: run.id,
      trigger: run.trigger,
      since: run.since.toISOString(),
      until: run.until.toISOString(),
      status: run.status,
      created: run.created,
    });
  }
}
