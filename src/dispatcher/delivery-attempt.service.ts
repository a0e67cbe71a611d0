import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { MetricsService } from '../metrics/metrics.service';
import { deliveryRetry } from '../queue/queue.constants';
import { DeliverySenderService } from './delivery-sender.service';
import { previousSecretInGrace } from '../webhooks/secret-rotation';
import { DeliveryStore, DeliveryTarget } from './delivery.store';

export const INACTIVE_WEBHOOK_ERROR = 'webhook is inactive: delivery cancelled, not sent';

/**
 * What the delivery's job does after an attempt: end (sent, or nothing left to send), retry
 * after `delayMs`, or fail for good.
 */
export type AttemptOutcome =
  | { next: 'done' }
  | { next: 'retry'; attempt: number; error: string | null; delayMs: number; what: string }
  | { next: 'failed'; error: string | null; what: string };

const DONE: AttemptOutcome = { next: 'done' };

/**
 * One attempt at a delivery (SPEC §4). PostgreSQL decides the attempt number and whether a
 * failure is final; the queue only carries the job and its backoff timer, so a job that the
 * sweeper re-queues continues where the record stands.
 */
@Injectable()
export class DeliveryAttemptService {
  private readonly logger = new Logger(DeliveryAttemptService.name);
  private readonly retry: ReturnType<typeof deliveryRetry>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly sender: DeliverySenderService,
    private readonly metrics: MetricsService,
  ) {
    this.retry = deliveryRetry(config);
  }

  /**
   * Sends the delivery's next attempt and records it. A delivery that is gone (deleted with
   * its webhook) or already final is not sent; one whose webhook is inactive is ended as
   * failed, unsent. Throws only when the record cannot be read or written: nothing was
   * recorded then.
   */
  async attempt(deliveryId: string): Promise<AttemptOutcome> {
    const target = await this.store.load(deliveryId);
    if (!target || target.status !== 'pending') return DONE;
    if (!target.active) {
      await this.cancel(target);
      return DONE;
    }

    const attempt = target.attemptCount + 1;
    const result = await this.sender.send({
      deliveryId,
      event: target.event,
      url: target.url,
      body: target.body,
      secretEncrypted: target.secretEncrypted,
      previousSecretEncrypted: previousSecretInGrace(target, new Date()),
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
      return DONE;
    }

    const outcome = result.ok ? 'success' : 'failure';
    this.metrics.deliveryAttempts.observe({ outcome }, result.durationMs / 1000);
    const what = `webhook ${target.webhookId}, delivery attempt ${attempt}/${this.retry.attempts}`;
    if (result.ok) {
      this.metrics.deliveries.inc({ outcome: 'succeeded' });
      this.logger.debug(`delivery ${deliveryId} to ${what} succeeded (HTTP ${result.statusCode})`);
      return DONE;
    }
    if (delayMs === null) {
      this.metrics.deliveries.inc({ outcome: 'failed' });
      // The job runner logs it, final.
      return { next: 'failed', error: result.error, what: `${what} failed: ${result.error}` };
    }
    return {
      next: 'retry',
      attempt,
      error: result.error,
      delayMs,
      what: `${what} failed: ${result.error}`,
    };
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
