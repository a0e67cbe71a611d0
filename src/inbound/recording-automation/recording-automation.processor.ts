import { InjectQueue } from '@nestjs/bull';
import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { InboundJobData } from '../inbound-job';
import { attemptLabel, isFinalAttempt } from '../../queue/attempts';
import { JOBS, QUEUES } from '../../queue/queue.constants';
import { QueueProcessors } from '../../queue/queue-processors';
import { RecordingAutomationService, reasonOf } from './recording-automation.service';

/** Recordings handled at once per worker: each may wait on the platform API. */
const CONCURRENCY = 5;

/**
 * Works the recordings queue (worker role) with the recording automation; its last attempt
 * (RECORDING_AUTOMATION_MAX_RETRIES + 1) is the one that may publish operation.failed.
 */
@Injectable()
export class RecordingAutomationProcessor
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(RecordingAutomationProcessor.name);

  constructor(
    @InjectQueue(QUEUES.recordings) private readonly queue: Queue<InboundJobData>,
    private readonly automation: RecordingAutomationService,
    private readonly processors: QueueProcessors,
  ) {}

  onApplicationBootstrap(): void {
    this.processors.start(
      this.queue,
      JOBS.recordingAutomation,
      CONCURRENCY,
      (job: Job<InboundJobData>) => this.run(job),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.pause(true);
  }

  async run(job: Job<InboundJobData>): Promise<void> {
    const what = `recording automation for inbound event ${job.data.inboundEventId}, ${attemptLabel(job)}`;
    try {
      await this.automation.complete(job.data.inboundEventId, isFinalAttempt(job), what);
    } catch (error) {
      this.logger.error(
        `${what}: ${reasonOf(error)}; ` +
          (isFinalAttempt(job)
            ? 'final for this job; the inbound sweeper queues the event again'
            : 'will retry'),
      );
      throw error;
    }
  }
}
