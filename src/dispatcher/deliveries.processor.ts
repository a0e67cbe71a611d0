import { InjectQueue } from '@nestjs/bull';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { JOBS, QUEUES, RetryLaterError } from '../queue/queue.constants';
import { QueueProcessors } from '../queue/queue-processors';
import { AttemptOutcome, DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverJobData } from './delivery-job';

/**
 * Works the deliveries queue (worker role): one attempt per job run (DeliveryAttemptService),
 * its outcome turned into the job's: done, retried after the backoff, or failed for good.
 */
@Injectable()
export class DeliveriesProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveriesProcessor.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue,
    private readonly attempts: DeliveryAttemptService,
    private readonly processors: QueueProcessors,
  ) {}

  onApplicationBootstrap(): void {
    this.processors.start(
      this.queue,
      JOBS.deliver,
      this.config.delivery.concurrency,
      (job: Job<DeliverJobData>) => this.handle(job),
    );
  }

  /**
   * Takes no new jobs and waits for the attempts in flight to be recorded, before the database
   * and Redis connections close (their hooks run after this one). A job that does not finish
   * in time stays active in Redis and is retried after Bull's stalled-job check.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.pause(true);
  }

  async handle(job: Job<DeliverJobData>): Promise<void> {
    let outcome: AttemptOutcome;
    try {
      outcome = await this.attempts.attempt(job.data.deliveryId);
    } catch (error) {
      throw this.unrecorded(job, error);
    }
    if (outcome.next === 'failed') {
      // Keeps the job in the failed set without another retry: the record says it is over.
      void job.discard();
      throw new Error(`final attempt failed: ${outcome.error}`);
    }
    if (outcome.next === 'retry') {
      throw new RetryLaterError(
        `attempt ${outcome.attempt} failed: ${outcome.error}`,
        outcome.delayMs,
      );
    }
  }

  /** For errors outside the attempt itself (database down): nothing was recorded. */
  private unrecorded(job: Job<DeliverJobData>, error: unknown): Error {
    const retries = job.attemptsMade + 1 < (job.opts.attempts ?? 1);
    this.logger.error(
      `delivery ${job.data.deliveryId}: ${(error as Error).message}; nothing recorded: ` +
        (retries
          ? 'will retry'
          : 'final for this job; the sweeper re-queues the delivery while it is pending'),
    );
    return error as Error;
  }
}
