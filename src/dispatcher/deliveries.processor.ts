import { Injectable } from '@nestjs/common';
import type { Job } from 'bull';
import { OnJob } from '../queue/on-job.decorator';
import {
  DeferJobError,
  FinalJobError,
  JOBS,
  QUEUES,
  RetryLaterError,
} from '../queue/queue.constants';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverJobData } from './delivery-job';

/**
 * Works the deliveries queue (worker role): one attempt per job run (DeliveryAttemptService),
 * its outcome turned into the job's: done, retried after the backoff, or failed for good. The
 * job runner logs each failure, saying whether it will retry.
 */
@Injectable()
export class DeliveriesProcessor {
  constructor(private readonly attempts: DeliveryAttemptService) {}

  @OnJob({
    queue: QUEUES.deliveries,
    job: JOBS.deliver,
    concurrency: (config) => config.delivery.concurrency,
    whenFinal: 'the sweeper re-queues the delivery while it is pending',
  })
  async handle(job: Job<DeliverJobData>): Promise<void> {
    const outcome = await this.attempts.attempt(job.data.deliveryId);
    if (outcome.next === 'failed') {
      throw new FinalJobError(outcome.what, 'delivery marked failed');
    }
    if (outcome.next === 'deferred') {
      throw new DeferJobError('the webhook has all its delivery slots in flight', outcome.delayMs);
    }
    if (outcome.next === 'retry') {
      throw new RetryLaterError(outcome.what, outcome.delayMs);
    }
  }
}
