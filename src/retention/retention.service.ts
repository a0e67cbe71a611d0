import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { MetricsService } from '../metrics/metrics.service';
import { DeletedRows, RetentionStore, RetentionTable } from './retention.store';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Partitions are made this far ahead, or two partitions ahead when they are wider. */
export const PARTITIONS_AHEAD_DAYS = 7;
/** Rows per delete: small enough that a batch holds its row locks for milliseconds. */
export const RETENTION_BATCH = 1000;
/**
 * Deliveries first: an event goes only once none of its deliveries is left. Attendance last:
 * it goes with the inputs it was computed from (docs/attendance.md#retention).
 */
const TABLES: RetentionTable[] = ['deliveries', 'events', 'inbound_events', 'attendance'];

const NONE: DeletedRows = {
  deliveries: 0,
  deliveryAttempts: 0,
  events: 0,
  inboundEvents: 0,
  attendance: 0,
};
/** A platform account that left has its data deleted within this (docs/accounts.md#leaving). */
export const ACCOUNT_PURGE_WITHIN_MS = 10 * 60_000;

/**
 * Retention (docs/api.md#receiver-health): once at start and then every RETENTION_INTERVAL_MS, deletes ended
 * deliveries with their attempts, events and inbound platform events older than
 * RETENTION_DAYS, a small batch at a time, one process at a time. Shutdown stops it between
 * two batches.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionService.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastFullRun = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: RetentionStore,
    private readonly metrics: MetricsService,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One run; resolves to what it deleted, or null when another process was running it. */
  async run(now = new Date()): Promise<DeletedRows | null> {
    const cutoff = new Date(now.getTime() - this.config.retention.days * DAY_MS);
    const total = { ...NONE };
    const ran = await this.store.exclusively(async () => {
      this.count(await this.store.purgeAccounts(), total);
      this.lastFullRun = now.getTime();
      await this.makePartitions(now);
      // Whole partitions first; the batches then take what they kept and the straddling ones.
      this.count(await this.store.dropPartitions(cutoff), total);
      for (const table of TABLES) {
        for (;;) {
          if (this.stopped) return;
          const deleted = await this.store.deleteBatch(table, cutoff, RETENTION_BATCH);
          this.count(deleted, total);
          const rows =
            deleted.deliveries + deleted.events + deleted.inboundEvents + deleted.attendance;
          if (rows < RETENTION_BATCH) break;
        }
      }
      while (
        !this.stopped &&
        (await this.store.deleteKeysBatch(cutoff, RETENTION_BATCH)) >= RETENTION_BATCH
      );
    });
    return ran ? total : null;
  }

  /**
   * Makes the history tables' partitions (PARTITION_DAYS wide) up to PARTITIONS_AHEAD_DAYS
   * ahead of `now` (docs/operations.md#partitions); there is no default partition to catch a
   * row past the last one.
   */
  async makePartitions(now = new Date()): Promise<number> {
    const days = this.config.retention.partitionDays;
    const until = new Date(now.getTime() + Math.max(PARTITIONS_AHEAD_DAYS, 2 * days) * DAY_MS);
    return this.store.makePartitions(until, days);
  }

  private count(deleted: DeletedRows, total: DeletedRows): void {
    total.deliveries += deleted.deliveries;
    total.deliveryAttempts += deleted.deliveryAttempts;
    total.events += deleted.events;
    total.inboundEvents += deleted.inboundEvents;
    total.attendance += deleted.attendance;
    this.metrics.retentionDeleted.inc({ table: 'deliveries' }, deleted.deliveries);
    this.metrics.retentionDeleted.inc({ table: 'delivery_attempts' }, deleted.deliveryAttempts);
    this.metrics.retentionDeleted.inc({ table: 'events' }, deleted.events);
    this.metrics.retentionDeleted.inc({ table: 'inbound_events' }, deleted.inboundEvents);
    this.metrics.retentionDeleted.inc({ table: 'attendance' }, deleted.attendance);
  }

  /** Only the deletes of platform accounts that left; null when another process was running. */
  async purgeAccounts(): Promise<DeletedRows | null> {
    const total = { ...NONE };
    const ran = await this.store.exclusively(async () => {
      this.count(await this.store.purgeAccounts(), total);
    });
    return ran ? total : null;
  }

  // Every RETENTION_INTERVAL_MS a full run; between two, with a longer interval, the account
  // deletes alone, often enough that an account's data goes within ACCOUNT_PURGE_WITHIN_MS.
  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const full = Date.now() - this.lastFullRun >= this.config.retention.intervalMs;
      this.running = (full ? this.runAndReport() : this.purgeAndReport()).finally(() => {
        this.running = undefined;
        this.schedule(Math.min(this.config.retention.intervalMs, ACCOUNT_PURGE_WITHIN_MS / 2));
      });
    }, delayMs);
  }

  private async purgeAndReport(): Promise<void> {
    try {
      await this.makePartitions();
      const deleted = await this.purgeAccounts();
      if (deleted && deleted.events + deleted.inboundEvents + deleted.attendance > 0) {
        this.logger.log(
          `retention (platform accounts that left): deleted ${deleted.deliveries} deliveries, ` +
            `${deleted.events} events, ${deleted.inboundEvents} inbound events, ` +
            `${deleted.attendance} attendance`,
        );
      }
    } catch (error) {
      this.logger.error(`retention of accounts that left failed: ${(error as Error).message}`);
    }
  }

  private async runAndReport(): Promise<void> {
    try {
      const deleted = await this.run();
      if (deleted === null) {
        this.logger.debug('retention: another worker is running it');
        return;
      }
      this.logger.log(
        `retention (older than ${this.config.retention.days} days): deleted ` +
          `${deleted.deliveries} deliveries with ${deleted.deliveryAttempts} attempts, ` +
          `${deleted.events} events, ${deleted.inboundEvents} inbound events, ` +
          `${deleted.attendance} attendances`,
      );
    } catch (error) {
      this.logger.error(
        `retention failed: ${(error as Error).message}; next run in ` +
          `${this.config.retention.intervalMs} ms`,
      );
    }
  }
}
