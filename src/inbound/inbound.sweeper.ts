import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { QUEUES } from '../queue/queue.constants';
import { Sweeper } from '../queue/sweeper';
import { InboundEventStore } from './inbound-event.store';
import { InboundJobData, inboundJob } from './inbound-job';

/** Bounds one sweep; a larger backlog is taken over the following sweeps, oldest first. */
const BATCH = 500;

/**
 * No stored event is lost to Redis: every INBOUND_SWEEP_INTERVAL_MS a worker re-queues the
 * events still unprocessed INBOUND_SWEEP_GRACE_MS after they arrived that the queue does not
 * hold (see Sweeper and ensureJobs). Workers may sweep at once: Bull queues each id once, and
 * processing is idempotent.
 */
@Injectable()
export class InboundSweeper extends Sweeper {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<InboundJobData>,
    private readonly store: InboundEventStore,
  ) {
    super({ what: 'stored inbound events', intervalMs: config.inboundSweep.intervalMs });
  }

  /** One sweep; returns how many events it queued. */
  async sweep(): Promise<number> {
    const before = new Date(Date.now() - this.config.inboundSweep.graceMs);
    const ids = await this.store.findUnprocessed(before, BATCH);
    return this.requeue(this.queue, ids.map(inboundJob));
  }
}
