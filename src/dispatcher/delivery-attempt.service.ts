import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { MetricsService } from '../metrics/metrics.service';
import { deliveryRetry } from '../queue/queue.constants';
import { previousSecretInGrace } from '../webhooks/secret-rotation';
import { AttemptResult, DeliverySenderService } from './delivery-sender.service';
import { DeliveryStore, DeliveryTarget } from './delivery.store';
import { ReceiverHealthService } from './receiver-health.service';
import { retryAfterMs } from './retry-after';
import { WebhookSlots } from './webhook-slots';

export const INACTIVE_WEBHOOK_ERROR = 'webhook is inactive: delivery cancelled, not sent';

/**
 * What the delivery's job does after an attempt: end (sent, or nothing left to send), retry
 * after `delayMs`, or fail for good.
 */
export type AttemptOutcome =
  | { next: 'done' }
  /** The webhook has all its slots in flight here: nothing was sent or counted. */
  | { next: 'deferred'; delayMs: number }
  | { next: 'retry'; attempt: number; error: string | null; delayMs: number; what: string }
  | { next: 'failed'; error: string | null; what: string };

const DONE: AttemptOutcome = { next: 'done' };

/**
 * How long a delivery whose webhook is at its in-flight limit waits before it looks again:
 * short, since a slot frees as soon as one attempt ends; jittered so the waiting jobs of one
 * webhook do not all come back together.
 */
const DEFER_MS = 250;
const deferDelayMs = (): number => Math.round(DEFER_MS * (0.5 + Math.random()));

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
    private readonly slots: WebhookSlots,
    private readonly health: ReceiverHealthService,
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

    const release = this.slots.tryAcquire(target.webhookId);
    if (!release) return { next: 'deferred', delayMs: deferDelayMs() };

    const attempt = target.attemptCount + 1;
    let result: AttemptResult;
    try {
      result = await this.sender.send({
        deliveryId,
        event: target.event,
        url: target.url,
        body: target.body,
        secretEncrypted: target.secretEncrypted,
        previousSecretEncrypted: previousSecretInGrace(target, new Date()),
        attempt,
      });
    } finally {
      release();
    }
    // A redelivery or replay starts a fresh series: the retry budget counts from its start.
    const inSeries = attempt - target.seriesStart;
    const final = result.ok || result.statusCode === 410 || inSeries >= this.retry.attempts;
    const delayMs = final ? null : this.retryDelayMs(inSeries, result);
    const status = result.ok ? 'succeeded' : final ? 'failed' : 'pending';
    const recorded = await this.store.recordAttempt({
      deliveryId,
      attempt,
      result,
      status,
      nextAttemptAt: delayMs === null ? null : new Date(Date.now() + delayMs),
    });
    if (!recorded) {
      this.logger.warn(
        `delivery ${deliveryId}: attempt ${attempt} not recorded, the delivery changed meanwhile ` +
          '(deleted or recorded by another worker): final for this job',
      );
      return DONE;
    }

    await this.health
      .afterAttempt({
        webhookId: target.webhookId,
        event: target.event,
        status,
        statusCode: result.statusCode,
        consecutiveFailures: target.consecutiveFailures,
      })
      .catch((error: Error) =>
        // The attempt is recorded; the next delivery's outcome applies the rules again.
        this.logger.error(
          `delivery ${deliveryId}: receiver health of webhook ${target.webhookId} not updated: ` +
            error.message,
        ),
      );

    const outcome = result.ok ? 'success' : 'failure';
    this.metrics.deliveryAttempts.observe({ outcome }, result.durationMs / 1000);
    const what =
      `webhook ${target.webhookId}, delivery attempt ${attempt}` +
      (target.seriesStart > 0
        ? ` (${inSeries}/${this.retry.attempts} of this series)`
        : `/${this.retry.attempts}`);
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

  /** The backoff, or the receiver's Retry-After on 429/503 when that is longer (SPEC §9). */
  private retryDelayMs(retry: number, result: AttemptResult): number {
    const backoff = this.retry.delayMs(retry);
    return Math.max(backoff, retryAfterMs(result.statusCode, result.retryAfter) ?? 0);
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
