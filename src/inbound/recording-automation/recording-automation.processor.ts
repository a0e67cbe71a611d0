import { Injectable } from '@nestjs/common';
import type { Job } from 'bull';
import { InboundJobData } from '../inbound-job';
import { attemptLabel, isFinalAttempt } from '../../queue/attempts';
import { OnJob } from '../../queue/on-job.decorator';
import { JOBS, QUEUES } from '../../queue/queue.constants';
import { RecordingAutomationService } from './recording-automation.service';

/**
 * Works the recordings queue (worker role) with the recording automation; its last attempt
 * (RECORDING_AUTOMATION_MAX_RETRIES + 1) is the one that may publish operation.failed.
 */
@Injectable()
export class RecordingAutomationProcessor {
  constructor(private readonly automation: RecordingAutomationService) {}

  // Each recording may wait on the platform API, so only a few run at once.
  @OnJob({
    queue: QUEUES.recordings,
    job: JOBS.recordingAutomation,
    concurrency: 5,
    whenFinal: 'the inbound sweeper queues the event again',
  })
  async run(job: Job<InboundJobData>): Promise<void> {
    const what = `recording automation for inbound event ${job.data.inboundEventId}, ${attemptLabel(job)}`;
    await this.automation.complete(job.data.inboundEventId, isFinalAttempt(job), what);
  }
}
