import { HttpException, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { DispatcherService } from '../../dispatcher/dispatcher.service';
import { meetingData } from '../event-mapping';
import { InboundEventEntity } from '../inbound-event.entity';
import { InboundEventStore } from '../inbound-event.store';
import { InboundJobData, automationOutcomeKey, platformObjectOf, sourceOf } from '../inbound-job';
import { attemptLabel, isFinalAttempt } from '../../queue/attempts';
import { OnJob } from '../../queue/on-job.decorator';
import { JOBS, QUEUES } from '../../queue/queue.constants';
import { RecordingAutomationService } from './recording-automation.service';

interface Outcome {
  kind: 'operation.complete' | 'operation.failed';
  data: Record<string, unknown>;
}

/** The reason given to subscribers: the platform's status and message, never a token or URL. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof HttpException
    ? `meeting platform call failed (${error.getStatus()}): ${message}`
    : message;
}

/**
 * The recording automation (SPEC §5), on the recordings queue (worker role): for a stored
 * recording.completed or recording.transcript_completed event, publish operation.complete
 * with the recording's files behind this service's download route; when the files cannot be
 * collected on the last of its attempts (RECORDING_AUTOMATION_MAX_RETRIES + 1), publish
 * operation.failed with the reason instead. One of them is published per event, once (both
 * share one idempotency key), and only then is the inbound event marked processed.
 */
@Injectable()
export class RecordingAutomationProcessor {
  private readonly logger = new Logger(RecordingAutomationProcessor.name);

  constructor(
    private readonly store: InboundEventStore,
    private readonly automation: RecordingAutomationService,
    private readonly dispatcher: DispatcherService,
  ) {}

  // Each recording may wait on the platform API, so only a few run at once.
  @OnJob({
    queue: QUEUES.recordings,
    job: JOBS.recordingAutomation,
    concurrency: 5,
    whenFinal: 'the inbound sweeper queues the event again',
  })
  async run(job: Job<InboundJobData>): Promise<void> {
    const what = `recording automation for inbound event ${job.data.inboundEventId}, ${attemptLabel(job)}`;
    await this.complete(job, what);
  }

  private async complete(job: Job<InboundJobData>, what: string): Promise<void> {
    const row = await this.store.findById(job.data.inboundEventId);
    if (!row || row.processedAt) return;
    const key = automationOutcomeKey(row);
    const earlier = await this.publishedOutcome(key);
    if (earlier) this.logger.log(`${what}: ${earlier.kind} was published before; it stands`);
    const outcome = earlier ?? (await this.decide(job, row, what));
    // With an earlier outcome nothing is added: publish only queues its deliveries again.
    await this.dispatcher.publish({ ...outcome, source: sourceOf(row), idempotencyKey: key });
    // A run of the same event may have published in between: whichever came first stands.
    const kept = earlier ?? (await this.publishedOutcome(key)) ?? outcome;
    const error = kept.kind === 'operation.failed' ? String(kept.data.error) : null;
    await this.store.markProcessed(row.id, error);
  }

  /** operation.complete with the files, or on the last attempt operation.failed. */
  private async decide(
    job: Job<InboundJobData>,
    row: InboundEventEntity,
    what: string,
  ): Promise<Outcome> {
    const object = platformObjectOf(row);
    try {
      const files = await this.automation.collectFiles(row.event, object);
      return { kind: 'operation.complete', data: { ...meetingData(object), files } };
    } catch (error) {
      const reason = reasonOf(error);
      // The platform's status goes into the message the job runner logs and Bull keeps.
      if (!isFinalAttempt(job)) throw new Error(reason, { cause: error });
      this.logger.error(`${what}: ${reason}; final: publishing operation.failed`);
      return { kind: 'operation.failed', data: { ...meetingData(object), error: reason } };
    }
  }

  private async publishedOutcome(key: string): Promise<Outcome | null> {
    return (await this.dispatcher.published(key)) as Outcome | null;
  }
}
