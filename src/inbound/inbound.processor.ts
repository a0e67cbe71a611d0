import { InjectQueue } from '@nestjs/bull';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { DispatcherService } from '../dispatcher/dispatcher.service';
import { attemptLabel, isFinalAttempt } from '../queue/attempts';
import { ensureJob } from '../queue/ensure-job';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { QueueProcessors } from '../queue/queue-processors';
import { routeOf } from './event-mapping';
import { InboundEventStore } from './inbound-event.store';
import { InboundJobData, platformObjectOf, publishKey, sourceOf } from './inbound-job';

/** Jobs worked at once per worker: each is two or three short queries and a publish. */
const CONCURRENCY = 20;

/**
 * Works the inbound queue (worker role): maps a stored platform event through EVENT_MAPPING
 * and publishes it, hands recording events to the recording automation, and marks unmapped
 * ones processed. Idempotent: a job run twice (sweeper, stalled job) publishes with the same
 * key, so subscribers are notified once.
 */
@Injectable()
export class InboundProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(InboundProcessor.name);

  constructor(
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<InboundJobData>,
    @InjectQueue(QUEUES.recordings) private readonly recordings: Queue<InboundJobData>,
    private readonly store: InboundEventStore,
    private readonly dispatcher: DispatcherService,
    private readonly processors: QueueProcessors,
  ) {}

  onApplicationBootstrap(): void {
    this.processors.start(
      this.queue,
      JOBS.processInbound,
      CONCURRENCY,
      (job: Job<InboundJobData>) => this.run(job),
    );
  }

  /** Takes no new jobs; those in flight finish before the connections close. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.pause(true);
  }

  async run(job: Job<InboundJobData>): Promise<void> {
    try {
      await this.process(job.data.inboundEventId);
    } catch (error) {
      const final = isFinalAttempt(job);
      const message = (error as Error).message;
      this.logger.error(
        `inbound event ${job.data.inboundEventId}, ${attemptLabel(job)}: ${message}; ` +
          (final
            ? 'final for this job; the sweeper queues it again while it is unprocessed'
            : 'will retry'),
      );
      if (final) {
        await this.store.recordError(job.data.inboundEventId, message).catch(() => undefined);
      }
      throw error;
    }
  }

  async process(id: string): Promise<void> {
    const row = await this.store.findById(id);
    if (!row || row.processedAt) return;
    const route = routeOf(row.event);
    if (!route) {
      // Stored as the record of what the platform sent, not delivered (SPEC §5).
      await this.store.markProcessed(id);
      return;
    }
    if ('automation' in route) {
      // The automation marks the event processed once it has published its outcome.
      await ensureJob(this.recordings, JOBS.recordingAutomation, { inboundEventId: id }, id);
      return;
    }
    await this.dispatcher.publish({
      kind: route.kind,
      data: route.data(platformObjectOf(row)),
      source: sourceOf(row),
      idempotencyKey: publishKey(row, route.kind),
    });
    await this.store.markProcessed(id);
  }
}
