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
import { MetricsService } from '../metrics/metrics.service';
import { JOBS, QUEUES, RetryLaterError, retryDelayMs } from '../queue/queue.constants';
import { QueueProcessors } from '../queue/queue-processors';
import { DeliverJobData } from './delivery-job';
import { DeliverySender } from './delivery-sender.service';
import { DeliveryStore, DeliveryTarget } from './delivery-store.service';

export const INACTIVE_WEBHOOK_ERROR = 'webhook is inactive: delivery cancelled, not sent';

/**
 * Works the deliveries queue (worker role): one attempt per job run. PostgreSQL decides the
 * attempt number and whether a failure is final; the queue only carries the job and its
 * backoff timer, so a job that the sweeper re-queues continues where the record stands.
 */
@Injectable()
export class DeliveriesProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly maxAttempts: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue,
    private readonly store: DeliveryStore,
    private readonly sender: DeliverySender,
    private readonly metrics: MetricsService,
    private readonly processors: QueueProcessors,
  ) {
    this.maxAttempts = config.delivery.maxRetries + 1;
  }

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
    const { deliveryId } = job.data;
    let target: DeliveryTarget | null;
    try {
      target = await this.store.load(deliveryId);
      // Gone with its webhook (deleted, cascading), or already final: nothing to send, ever.
      if (!target || target.status !== 'pending') return;
      if (!target.active) {
        await this.cancel(target);
        return;
      }
    } catch (error) {
      throw this.unrecorded(job, error);
    }

    const attempt = target.attemptCount + 1;
    const result = await this.sender.send({
      deliveryId,
      event: target.event,
      url: target.url,
      body: target.body,
      secretEncrypted: target.secretEncrypted,
      attempt,
    });
    const final = result.ok || attempt >= this.maxAttempts;
    const delayMs = final ? null : retryDelayMs(this.config.delivery.backoffMs, attempt);
    let recorded: boolean;
    try {
      recorded = await this.store.recordAttempt({
        deliveryId,
        attempt,
        result,
        status: result.ok ? 'succeeded' : final ? 'failed' : 'pending',
        nextAttemptAt: delayMs === null ? null : new Date(Date.now() + delayMs),
      });
    } catch (error) {
      throw this.unrecorded(job, error);
    }
    if (!recorded) {
      this.logger.warn(
        `delivery ${deliveryId}: attempt ${attempt} not recorded, the delivery changed meanwhile ` +
          '(deleted or recorded by another worker): final for this job',
      );
      return;
    }

    const outcome = result.ok ? 'success' : 'failure';
    this.metrics.deliveryAttempts.observe({ outcome }, result.durationMs / 1000);
    const what = `delivery ${deliveryId} attempt ${attempt}/${this.maxAttempts} to webhook ${target.webhookId}`;
    if (result.ok) {
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      this.logger.debug(`${what} succeeded (HTTP ${result.statusCode})`);
      return;
    }
    if (delayMs === null) {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      this.logger.warn(`${what} failed (${result.error}): final, delivery marked failed`);
      // Keeps the job in the failed set without another retry: the record says it is over.
      void job.discard();
      throw new Error(`final attempt failed: ${result.error}`);
    }
    this.logger.warn(`${what} failed (${result.error}): will retry in ${delayMs} ms`);
    throw new RetryLaterError(`attempt ${attempt} failed: ${result.error}`, delayMs);
  }

  private async cancel(target: DeliveryTarget): Promise<void> {
    if (await this.store.cancel(target.id, INACTIVE_WEBHOOK_ERROR)) {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      this.logger.log(
        `delivery ${target.id}: webhook ${target.webhookId} is inactive: final, not sent`,
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
