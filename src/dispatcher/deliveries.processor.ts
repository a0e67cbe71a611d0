import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { MetricsService } from '../metrics/metrics.service';
import { OnJob } from '../queue/on-job.decorator';
import {
  FinalJobError,
  JOBS,
  QUEUES,
  RetryLaterError,
  deliveryRetry,
} from '../queue/queue.constants';
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
export class DeliveriesProcessor {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly retry: ReturnType<typeof deliveryRetry>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly sender: DeliverySender,
    private readonly metrics: MetricsService,
  ) {
    this.retry = deliveryRetry(config);
  }

  @OnJob({
    queue: QUEUES.deliveries,
    job: JOBS.deliver,
    concurrency: (config) => config.delivery.concurrency,
    whenFinal: 'the sweeper re-queues the delivery while it is pending',
  })
  async handle(job: Job<DeliverJobData>): Promise<void> {
    const { deliveryId } = job.data;
    const target = await this.store.load(deliveryId);
    // Gone with its webhook (deleted, cascading), or already final: nothing to send, ever.
    if (!target || target.status !== 'pending') return;
    if (!target.active) {
      await this.cancel(target);
      return;
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
    const final = result.ok || attempt >= this.retry.attempts;
    const delayMs = final ? null : this.retry.delayMs(attempt);
    const recorded = await this.store.recordAttempt({
      deliveryId,
      attempt,
      result,
      status: result.ok ? 'succeeded' : final ? 'failed' : 'pending',
      nextAttemptAt: delayMs === null ? null : new Date(Date.now() + delayMs),
    });
    if (!recorded) {
      this.logger.warn(
        `delivery ${deliveryId}: attempt ${attempt} not recorded, the delivery changed meanwhile ` +
          '(deleted or recorded by another worker): final for this job',
      );
      return;
    }

    const outcome = result.ok ? 'success' : 'failure';
    this.metrics.deliveryAttempts.observe({ outcome }, result.durationMs / 1000);
    const what = `webhook ${target.webhookId}, delivery attempt ${attempt}/${this.retry.attempts}`;
    if (result.ok) {
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      this.logger.debug(`delivery ${deliveryId} to ${what} succeeded (HTTP ${result.statusCode})`);
      return;
    }
    if (delayMs === null) {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      throw new FinalJobError(`${what} failed: ${result.error}`, 'delivery marked failed');
    }
    throw new RetryLaterError(`${what} failed: ${result.error}`, delayMs);
  }

  private async cancel(target: DeliveryTarget): Promise<void> {
    if (await this.store.cancel(target.id, INACTIVE_WEBHOOK_ERROR)) {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      this.logger.log(
        `delivery ${target.id}: webhook ${target.webhookId} is inactive: final, not sent`,
      );
    }
  }
}
