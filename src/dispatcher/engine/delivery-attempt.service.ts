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
  async attempt(
    target: DeliveryTarget,
    sent: () => void = () => undefined,
  ): Promise<AttemptOutcome> {
    if (!target.active) {
      sent();
      await this.cancel(target);
      return DONE;
    }
    const attempt = target.attemptCount + 1;
    const span = this.tracing.startAttempt(target, attempt);
    const traceparent = traceparentOf(span);
    try {
      return await this.sendAndRecord(target, attempt, { span, traceparent }, sent);
    } catch (error) {
      this.tracing.failed(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /** The attempt itself: shaped, sent, its outcome decided and recorded, then its follow-ups. */
  private async sendAndRecord(
    target: DeliveryTarget,
    attempt: number,
    { span, traceparent }: { span: Span | null; traceparent: string | null },
    sent: () => void,
  ): Promise<AttemptOutcome> {
    const deliveryId = target.id;
    const destination = target.destination.type;
    const shaped = await this.shaping.attemptBytes({
      destinationType: destination,
      template: target.template,
      body: target.body,
      sentBody: target.sentBody,
    });
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
          traceparent,
        });
      }
    } finally {
      sent();
    }

    // The outcome. A redelivery or replay starts a fresh series: the retry budget counts from
    // its start. A template that failed fails the same way on the same body: no retries
    // (docs/templates.md). A retry waits the backoff, or the receiver's Retry-After on 429/503
    // when that is longer (docs/api.md#receiver-health).
    const inSeries = attempt - target.seriesStart;
    const gone = result.statusCode === 410 || result.gone === true;
    const final = result.ok || gone || !shaped.ok || inSeries >= this.retry.attempts;
    const delayMs = final
      ? null
      : Math.max(
          this.retry.delayMs(inSeries),
          retryAfterMs(result.statusCode, result.retryAfter) ?? 0,
        );
    const status = result.ok ? 'succeeded' : final ? 'failed' : 'pending';
    const ended = status === 'failed';

    // Traced once: on the attempt's span, and in the log line a failure writes in it.
    this.tracing.attemptResult(span, result, status);
    const what =
      `delivery ${deliveryId} to webhook ${target.webhookId}, attempt ${attempt}` +
      (target.seriesStart > 0
        ? ` (${inSeries}/${this.retry.attempts} of this series)`
        : `/${this.retry.attempts}`);
    const told = result.ok
      ? null
      : inSpan(
          span,
          `${what} failed: ${result.error}; ` +
            (ended ? 'final, delivery marked failed' : `will retry in ${delayMs} ms`),
        );

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

    // The follow-ups, each once: receiver health, the metrics, the log line, then the
    // operational events (the webhook disabled, the delivery failed).
    const disabled = await this.health
      .afterAttempt({
        webhookId: target.webhookId,
        event: target.event,
        status,
        statusCode: result.statusCode,
        gone,
        goneSaid: result.gone === true ? result.error : null,
        consecutiveFailures: target.consecutiveFailures,
        destination,
      })
      .catch((error: Error) => {
        // The attempt is recorded; the next delivery's outcome applies the rules again.
        this.logger.error(
          `delivery ${deliveryId}: receiver health of webhook ${target.webhookId} not updated: ` +
            error.message,
        );
        return null;
      });
    const outcome = result.ok ? 'success' : 'failure';
    this.metrics.deliveryAttempts.observe({ outcome, destination }, result.durationMs / 1000);
    if (result.ok) this.metrics.deliveries.inc({ outcome: 'succeeded', destination });
    if (ended) this.metrics.deliveries.inc({ outcome: 'failed', destination });
    if (told !== null) this.logger.warn(told);
    if (disabled !== null || ended) {
      await this.operational?.attemptEnded({
        deliveryId,
        webhookId: target.webhookId,
        event: target.event,
        disabled,
        failed: ended,
        traceContext: traceparent,
      });
    }
    return delayMs === null ? DONE : { next: 'retry', delayMs };
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
