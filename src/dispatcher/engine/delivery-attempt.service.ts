import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { MetricsService } from '../../metrics/metrics.service';
import { deliveryRetry } from '../../queue/queue.constants';
import { previousSecretInGrace } from '../../webhooks/secret-rotation';
import { AttemptResult, DeliverySenderService } from './delivery-sender.service';
import { DeliveryStore, DeliveryTarget } from '../../delivery-record/delivery.store';
import { OperationalEventsService } from '../operational-events/operational-events.service';
import { ReceiverHealthService } from './receiver-health.service';
import { retryAfterMs } from '../../common/retry-after';
import { failed } from '../../destinations/transport';
import { Tracing, inSpan, traceparentOf } from '../../telemetry/tracing';
import { ShapingService } from '../../shaping/shaping.service';

export const INACTIVE_WEBHOOK_ERROR = 'webhook is inactive: delivery cancelled, not sent';

/** What follows an attempt: nothing (sent, or nothing left to send), or a retry after `delayMs`. */
export type AttemptOutcome = { next: 'done' } | { next: 'retry'; delayMs: number };

const DONE: AttemptOutcome = { next: 'done' };

/**
 * One attempt at a claimed delivery (docs/api.md#notifications). PostgreSQL decides the attempt number and
 * whether a failure is final; the queue only carries the delivery to the worker (and a
 * retry's delay), so a delivery queued again continues where the record stands.
 */
@Injectable()
export class DeliveryAttemptService {
  private readonly logger = new Logger(DeliveryAttemptService.name);
  private readonly retry: ReturnType<typeof deliveryRetry>;
  private readonly shaping: ShapingService;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly sender: DeliverySenderService,
    private readonly metrics: MetricsService,
    private readonly health: ReceiverHealthService,
    @Optional() private readonly tracing: Tracing = Tracing.off,
    @Optional() private readonly operational?: OperationalEventsService,
    @Optional() shaping?: ShapingService,
  ) {
    this.retry = deliveryRetry(config);
    this.shaping = shaping ?? new ShapingService(config);
  }

  /**
   * Sends the next attempt of a delivery this worker has claimed (DeliveryStore.claim) and
   * records it; `sent` is called as soon as the request is over, before the record is written.
   * One whose webhook is inactive is ended as failed, unsent. Throws only when the record
   * cannot be written: nothing was recorded then, and the lease lapses for the sweeper.
   * Each attempt is a span of the trace its delivery was published in (docs/operations.md).
   */
  attempt(target: DeliveryTarget, sent: () => void = () => undefined): Promise<AttemptOutcome> {
    if (!target.active || !this.tracing.enabled) return this.attemptIn(null, target, sent);
    const span = this.tracing.startAttempt(target, target.attemptCount + 1);
    return this.attemptIn(span, target, sent)
      .catch((error: unknown) => {
        this.tracing.failed(span, error);
        throw error;
      })
      .finally(() => span?.end());
  }

  private async attemptIn(
    span: Span | null,
    target: DeliveryTarget,
    sent: () => void,
  ): Promise<AttemptOutcome> {
    const deliveryId = target.id;
    if (!target.active) {
      sent();
      await this.cancel(target);
      return DONE;
    }

    const attempt = target.attemptCount + 1;
    const shaped = await this.shape(target);
    let result: AttemptResult;
    try {
      if (!shaped.ok) {
        result = { ...failed(shaped.error), startedAt: new Date(), durationMs: 0 };
      } else {
        result = await this.sender.send({
          deliveryId,
          event: target.event,
          ownerClientId: target.ownerClientId,
          destination: target.destination,
          url: target.url,
          urlEncrypted: target.urlEncrypted ?? null,
          body: shaped.body,
          secretEncrypted: target.secretEncrypted,
          headersEncrypted: target.headersEncrypted,
          previousSecretEncrypted: previousSecretInGrace(target, new Date()),
          attempt,
          late: target.late,
          traceparent: traceparentOf(span),
        });
      }
    } finally {
      sent();
    }
    // A redelivery or replay starts a fresh series: the retry budget counts from its start.
    const inSeries = attempt - target.seriesStart;
    // A template that failed fails the same way on the same body: no retries (docs/templates.md).
    const gone = result.statusCode === 410 || result.gone === true;
    const final = result.ok || gone || !shaped.ok || inSeries >= this.retry.attempts;
    const delayMs = final ? null : this.retryDelayMs(inSeries, result);
    const status = result.ok ? 'succeeded' : final ? 'failed' : 'pending';
    this.tracing.attemptResult(span, result, status);
    const recorded = await this.store.recordAttempt({
      deliveryId,
      createdAt: target.createdAt,
      attempt,
      result,
      status,
      nextAttemptAt: delayMs === null ? null : new Date(Date.now() + delayMs),
      sentBody: shaped.ok && shaped.stored ? shaped.body : null,
    });
    if (!recorded) {
      this.logger.warn(
        `delivery ${deliveryId}: attempt ${attempt} not recorded, the delivery changed meanwhile ` +
          '(deleted or recorded by another worker)',
      );
      return DONE;
    }

    await this.health
      .afterAttempt({
        webhookId: target.webhookId,
        event: target.event,
        status,
        statusCode: result.statusCode,
        gone,
        goneSaid: result.gone === true ? result.error : null,
        consecutiveFailures: target.consecutiveFailures,
        destination: target.destination.type,
      })
      .catch((error: Error) =>
        // The attempt is recorded; the next delivery's outcome applies the rules again.
        this.logger.error(
          `delivery ${deliveryId}: receiver health of webhook ${target.webhookId} not updated: ` +
            error.message,
        ),
      );

    const outcome = result.ok ? 'success' : 'failure';
    const destination = target.destination.type;
    this.metrics.deliveryAttempts.observe({ outcome, destination }, result.durationMs / 1000);
    if (result.ok) {
      this.metrics.deliveries.inc({ outcome: 'succeeded', destination });
      return DONE;
    }
    const what =
      `delivery ${deliveryId} to webhook ${target.webhookId}, attempt ${attempt}` +
      (target.seriesStart > 0
        ? ` (${inSeries}/${this.retry.attempts} of this series)`
        : `/${this.retry.attempts}`);
    if (delayMs === null) {
      this.metrics.deliveries.inc({ outcome: 'failed', destination });
      this.logger.warn(
        inSpan(span, `${what} failed: ${result.error}; final, delivery marked failed`),
      );
      await this.operational?.deliveryFailed({
        deliveryId,
        webhookId: target.webhookId,
        event: target.event,
        traceContext: traceparentOf(span),
      });
      return DONE;
    }
    this.logger.warn(inSpan(span, `${what} failed: ${result.error}; will retry in ${delayMs} ms`));
    return { next: 'retry', delayMs };
  }

  /**
   * The bytes this attempt sends (shaping.service.ts): those the delivery was first sent when
   * it was shaped before (a redelivery sends them again), else its body shaped now, to be kept
   * (`stored`) with the attempt's record; a delivery that is not shaped sends its body.
   */
  private async shape(
    target: DeliveryTarget,
  ): Promise<{ ok: true; body: string; stored: boolean } | { ok: false; error: string }> {
    if (target.sentBody) return { ok: true, body: target.sentBody, stored: false };
    const rules = { destinationType: target.destination.type, template: target.template };
    if (!ShapingService.shapes(rules)) return { ok: true, body: target.body, stored: false };
    const shaped = await this.shaping.shape(rules, target.body);
    if (!shaped.ok) return shaped;
    return { ok: true, body: shaped.body ?? target.body, stored: shaped.body !== null };
  }

  /** The backoff, or the receiver's Retry-After on 429/503 when that is longer (docs/api.md#receiver-health). */
  private retryDelayMs(retry: number, result: AttemptResult): number {
    const backoff = this.retry.delayMs(retry);
    return Math.max(backoff, retryAfterMs(result.statusCode, result.retryAfter) ?? 0);
  }

  private async cancel(target: DeliveryTarget): Promise<void> {
    if (await this.store.cancel(target, INACTIVE_WEBHOOK_ERROR)) {
      this.metrics.deliveries.inc({ outcome: 'failed', destination: target.destination.type });
      this.logger.log(
        `delivery ${target.id}: webhook ${target.webhookId} is inactive: final, not sent`,
      );
    }
  }
}
