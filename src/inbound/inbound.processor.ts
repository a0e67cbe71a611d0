import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { DispatcherService } from '../dispatcher/dispatcher.service';
import { ensureJobs } from '../queue/ensure-job';
import { OnJob } from '../queue/on-job.decorator';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { routeOf } from './event-mapping';
import { InboundEventStore } from './inbound-event.store';
import {
  InboundJobData,
  platformObjectOf,
  publishKey,
  recordingJob,
  sourceOf,
} from './inbound-job';

/**
 * Works the inbound queue (worker role): maps a stored platform event through EVENT_MAPPING
 * and publishes it, hands recording events to the recording automation, and marks unmapped
 * ones processed. Idempotent: a job run twice (sweeper, stalled job) publishes with the same
 * key, so subscribers are notified once.
 */
@Injectable()
export class InboundProcessor {
  private readonly logger = new Logger(InboundProcessor.name);

  constructor(
    @InjectQueue(QUEUES.recordings) private readonly recordings: Queue<InboundJobData>,
    private readonly store: InboundEventStore,
    private readonly dispatcher: DispatcherService,
  ) {}

  // Each job is two or three short queries and a publish, so many run at once.
  @OnJob({
    queue: QUEUES.inbound,
    job: JOBS.processInbound,
    concurrency: 20,
    whenFinal: 'the sweeper queues it again while it is unprocessed',
    onFinalFailure: (processor: InboundProcessor, job: Job<InboundJobData>, error) =>
      processor.store.recordError(job.data.inboundEventId, error.message),
  })
  async process(job: Job<InboundJobData>): Promise<void> {
    const id = job.data.inboundEventId;
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
      await this.handOver(id);
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

  private async handOver(id: string): Promise<void> {
    const { notRemoved } = await ensureJobs(this.recordings, [recordingJob(id)]);
    for (const { reason } of notRemoved) {
      // The event stays unprocessed, so the inbound sweeper brings it back here later.
      this.logger.warn(
        `inbound event ${id}: the finished recording automation job cannot be replaced yet ` +
          `(${reason}); the sweeper queues the event again`,
      );
    }
  }
}
