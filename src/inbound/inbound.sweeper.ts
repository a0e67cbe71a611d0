import { InjectQueue } from '@nestjs/bull';
import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
} from '@nestjs/common';
import type { Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { ensureJob } from '../queue/ensure-job';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { InboundEventStore } from './inbound-event.store';
import { InboundJobData } from './inbound-job';

/** Bounds one sweep; a larger backlog is taken over the following sweeps, oldest first. */
const BATCH = 500;

/**
 * No stored event is lost to Redis: every INBOUND_SWEEP_INTERVAL_MS a worker looks for events
 * still unprocessed INBOUND_SWEEP_GRACE_MS after they arrived (the endpoint's queueing failed,
 * Redis lost its data, or a job failed for good) and makes sure a job is queued for each.
 * Workers may sweep at once: ensureJob queues each id once, and processing is idempotent.
 */
@Injectable()
export class InboundSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(InboundSweeper.name);
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<InboundJobData>,
    private readonly store: InboundEventStore,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .then((queued) => {
          if (queued > 0) this.logger.warn(`queued ${queued} stored inbound events again`);
        })
        .catch((error: Error) => this.logger.error(`inbound sweep failed: ${error.message}`))
        .finally(() => (this.running = undefined));
    }, this.config.inboundSweep.intervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One sweep; returns how many events it queued. */
  async sweep(): Promise<number> {
    const before = new Date(Date.now() - this.config.inboundSweep.graceMs);
    const ids = await this.store.findUnprocessed(before, BATCH);
    let queued = 0;
    for (const id of ids) {
      if (await ensureJob(this.queue, JOBS.processInbound, { inboundEventId: id }, id)) queued++;
    }
    return queued;
  }
}
