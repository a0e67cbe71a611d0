import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { InstallationStore } from '../../../accounts/installation.store';
import { withTimeout } from '../../../common/with-timeout';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { OperationalEventsService } from '../../../dispatcher/operational-events/operational-events.service';
import { missingZoomCredentials } from '../../../zoom/zoom-token.provider';
import { ReconcileRedis } from './reconcile-redis';
import { Run, ReconciliationStore, runAccountKey } from './reconciliation.store';
import { RunExecutor } from './run-executor';

/** How long the run lease lasts unless renewed: a dead holder's run is taken over after it. */
export const LEASE_MS = 15_000;
/** How often a process looks for work (and the holder renews its lease). */
const TICK_MS = 1000;
/** Longest wait for Redis while the process stops. */
const SHUTDOWN_WAIT_MS = 2000;
/** The longest a runtime timer can be set for (2^31 − 1 ms); longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * Runs going at once, each of another platform account (docs/reconciliation.md#accounts): one
 * account waiting out its platform limit (a 429's Retry-After, up to an hour) holds back only
 * its own run, and a few runs at once keep memory and connections small (a run holds a few
 * pages and INGESTS_IN_FLIGHT ingests).
 */
export const RUNS_AT_ONCE = 4;

/** Why a run was stopped from outside: ended by the API, or past RECONCILE_RUN_TIMEOUT_MS. */
class RunStopped extends Error {
  constructor(
    message: string,
    /** Whether the run is still to be ended `failed` with `message` (not ended already). */
    readonly end: boolean,
  ) {
    super(message);
  }
}

/**
 * The one reconciliation runner of the deployment (worker role): every process ticks, the one
 * holding the Redis lease creates the scheduled runs (one per platform account: the
 * server-to-server one and each active installation) and those of ended WebSocket gaps, and
 * runs the queued ones oldest first, one at a time per account and up to RUNS_AT_ONCE
 * accounts at once. A run whose process died (left `running`) is resumed by the next holder.
 * A holder that loses its lease stops its runs at once. No run goes on past
 * RECONCILE_RUN_TIMEOUT_MS from its start, nor after it was cancelled, and one that stops on
 * the same error twice is ended `failed` (docs/reconciliation.md#bounds).
 */
@Injectable()
export class ReconciliationRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ReconciliationRunner.name);
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  /** The runs under way here, by account (runAccountKey). */
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly lease: ReconcileRedis,
    private readonly store: ReconciliationStore,
    private readonly executor: RunExecutor,
    private readonly operational: OperationalEventsService,
    private readonly installations: InstallationStore,
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
    const runs = [...this.running.values()];
    for (const { stop } of runs) stop.abort(new Error('the process is stopping'));
    // Bounded: with Redis away a lease command waits for its return, and the drain would wait
    // for it past SHUTDOWN_TIMEOUT_MS. The runs stay `running` either way: the next holder
    // resumes them, and an unreleased lease lapses on its own.
    await withTimeout(
      Promise.all([this.ticking, ...runs.map((r) => r.done)]).then(() => this.lease.release()),
      SHUTDOWN_WAIT_MS,
      'the reconciliation lease was not released',
    ).catch((error: Error) => this.logger.warn(`${error.message}: it lapses on its own`));
  }

  private async tick(): Promise<void> {
    try {
      if (this.stopped || !(await this.lease.hold(LEASE_MS))) return;
      await this.plan();
      await this.announce();
      while (!this.stopped && this.running.size < RUNS_AT_ONCE) {
        const run = await this.store.start([...this.running.keys()]);
        // Taken while the process began to stop: left `running`, the next holder resumes it.
        if (run === null || this.stopped) break;
        this.launch(run);
      }
    } catch (error) {
      this.logger.error(`reconciliation runner: ${(error as Error).message}`);
    }
  }

  /** Runs `run` beside the others under way; its account takes no other run until it ends. */
  private launch(run: Run): void {
    const key = runAccountKey(run);
    const stop = new AbortController();
    const done = this.runHeld(run, stop)
      .catch((error: Error) => this.logger.error(`reconciliation runner: ${error.message}`))
      .finally(() => this.running.delete(key));
    this.running.set(key, { stop, done });
  }

  /** The scheduled run of each account when due, and a run per ended gap. */
  private async plan(): Promise<void> {
    const { intervalMs, lookbackMs, settleMs, gapDelayMs } = this.config.reconcile;
    // Without the platform's credentials every run would end `failed`: none is started that
    // nobody asked for (docs/reconciliation.md#without-credentials). Installed accounts have
    // tokens of their own.
    const serverToServer = missingZoomCredentials(this.config).length === 0;
    if (intervalMs > 0) {
      const accounts = [
        ...(serverToServer ? [null] : []),
        ...(await this.installations.activeAccounts()),
      ];
      const now = Date.now();
      const runs = await this.store.schedule(
        new Date(now - lookbackMs),
        new Date(now - settleMs),
        intervalMs,
        accounts,
      );
      for (const run of runs)
        this.logger.log(
          `scheduled reconciliation ${run.id} (${run.accountId ?? 'server-to-server'})`,
        );
    }
    // The platform socket is the server-to-server app's: its gaps are that account's.
    if (!serverToServer) return;
    for (const run of await this.store.scheduleGaps(gapDelayMs)) {
      this.logger.log(`reconciliation ${run.id} of a WebSocket gap`);
    }
  }

  /**
   * Runs `run` while renewing the lease; aborts it the moment the lease is lost, it is
   * cancelled (seen within TICK_MS), or it reaches RECONCILE_RUN_TIMEOUT_MS from its start.
   */
  private async runHeld(run: Run, controller: AbortController): Promise<void> {
    const timeoutMs = this.config.reconcile.runTimeoutMs;
    const left = (run.startedAt?.getTime() ?? Date.now()) + timeoutMs - Date.now();
    const overdue = `it ran longer than RECONCILE_RUN_TIMEOUT_MS (${timeoutMs} ms)`;
    if (left <= 0) {
      await this.endStopped(run, new RunStopped(overdue, true));
      return;
    }
    const renew = setInterval(() => {
      this.lease
        .hold(LEASE_MS)
        .then((held) => held || controller.abort(new Error('the run lease was lost')))
        .catch((error: Error) => controller.abort(error));
    }, LEASE_MS / 3);
    // Also announces runs cancelled meanwhile: they need not wait for this one to end.
    const watch = setInterval(() => {
      this.store
        .statusOf(run.id)
        .then((status) => {
          if (status !== 'running')
            controller.abort(new RunStopped(`it was ended while running (${status})`, false));
          return this.announce();
        })
        .catch((error: Error) => this.logger.warn(`reconciliation ${run.id}: ${error.message}`));
    }, TICK_MS);
    const limit = setTimeout(
      () => controller.abort(new RunStopped(overdue, true)),
      Math.min(left, MAX_TIMER_MS),
    );
    try {
      // Raced with the abort, so that a run stuck anywhere still ends when it must.
      const { status, tally } = await Promise.race([
        this.executor.execute(run, controller.signal),
        aborted(controller.signal),
      ]);
      const ended = await this.store.finish(run.id, status, tally);
      if (ended) await this.completed(ended);
    } catch (error) {
      if (controller.signal.aborted) {
        const reason: unknown = controller.signal.reason;
        if (reason instanceof RunStopped) return await this.endStopped(run, reason);
        this.logger.warn(`reconciliation ${run.id} stopped: ${(error as Error).message}`);
        return;
      }
      // Not the platform (that ends it `failed` in the executor): PostgreSQL, Redis, a bug.
      // Resumed at the next tick, unless it failed the same way before.
      const message = (error as Error).message;
      const failed = await this.store.interrupted(run.id, message);
      if (failed) {
        this.logger.error(`reconciliation ${run.id} failed: interrupted twice by ${message}`);
        await this.completed(failed);
        return;
      }
      this.logger.error(`reconciliation ${run.id} interrupted: ${message}`);
      throw error;
    } finally {
      clearInterval(renew);
      clearInterval(watch);
      clearTimeout(limit);
    }
  }

  /** A run stopped from outside: ended `failed` saying why, unless the API ended it already. */
  private async endStopped(run: Run, reason: RunStopped): Promise<void> {
    this.logger.warn(`reconciliation ${run.id} stopped: ${reason.message}`);
    if (!reason.end) return;
    const ended = await this.store.end(run.id, reason.message, true);
    if (ended) await this.completed(ended);
  }

  /** bridge.reconciliation.completed of the runs ended outside the runner (cancelled). */
  private async announce(): Promise<void> {
    for (const run of await this.store.announceable()) await this.completed(run);
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

/** Rejects with the signal's reason once it is aborted. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
