import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { MetricsService } from '../../metrics/metrics.service';
import type { DestinationType } from '../../destinations/registry';
import { TEST_EVENT } from '../../webhooks/subscription-events';
import { WebhookDisabledReason } from '../../webhooks/webhook.entity';
import { DeliveryStatus } from '../../delivery-record/delivery.entity';
import { ReceiverHealthStore } from '../../delivery-record/receiver-health.store';

/** What the health rules need of a delivery whose attempt was just recorded. */
export interface AttemptedDelivery {
  webhookId: string;
  event: string;
  /** The delivery's status after the attempt. */
  status: DeliveryStatus;
  statusCode: number | null;
  /**
   * The receiver said the webhook is gone for good: a 410, or a chat tool's own way of saying it
   * (Slack's 404 no_service). Absent: a 410 alone.
   */
  gone?: boolean;
  /**
   * What the destination said in words of its own when it called the webhook gone (Slack's
   * "Slack answered 404 no_service: the webhook was removed"): the deliveries the disabling
   * ends record it. Absent: a bare 410.
   */
  goneSaid?: string | null;
  /** The webhook's run of failed deliveries as loaded before the attempt. */
  consecutiveFailures: number;
  /** Its destination type, the label of the deliveries a disabling ends (http when absent). */
  destination?: DestinationType;
}

export const disabledError = (
  reason: WebhookDisabledReason,
  failures: number,
  /** What the receiver said when it is gone in words of its own; else a 410 is meant. */
  said: string | null = null,
): string =>
  reason === 'gone'
    ? `webhook disabled: ${said ?? 'the receiver answered 410 Gone'}`
    : `webhook disabled: its last ${failures} deliveries failed`;

/**
 * Receiver health (docs/api.md#receiver-health): a 410 Gone disables the webhook at once; a run of
 * WEBHOOK_DISABLE_AFTER_FAILURES deliveries that ended failed (test deliveries aside)
 * disables it as failing. Disabling ends its pending deliveries, is logged and is counted; the
 * attempt's follow-ups report it (bridge.webhook.disabled).
 */
@Injectable()
export class ReceiverHealthService {
  private readonly logger = new Logger(ReceiverHealthService.name);
  private readonly disableAfter: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: ReceiverHealthStore,
    private readonly metrics: MetricsService,
  ) {
    this.disableAfter = config.webhooks.disableAfterFailures;
  }

  /**
   * Applies the rules after one recorded attempt; resolves to why it disabled the webhook, or
   * null when it did not (or another worker had disabled it already).
   */
  async afterAttempt(delivery: AttemptedDelivery): Promise<WebhookDisabledReason | null> {
    const gone = delivery.statusCode === 410 || delivery.gone === true;
    const failures = gone ? 0 : await this.failureRun(delivery);
    if (!gone && !(this.disableAfter > 0 && failures >= this.disableAfter)) return null;
    const reason: WebhookDisabledReason = gone ? 'gone' : 'failing';
    const error = disabledError(reason, failures, delivery.goneSaid ?? null);
    const ended = await this.store.disable(delivery.webhookId, reason, error);
    if (ended === null) return null;
    this.metrics.webhooksDisabled.inc({ reason });
    if (ended > 0) {
      const destination = delivery.destination ?? 'http';
      this.metrics.deliveries.inc({ outcome: 'failed', destination }, ended);
    }
    this.logger.warn(
      `webhook ${delivery.webhookId} disabled (${reason}): ${error}; ${ended} pending deliveries ` +
        'ended failed (PATCH active: true enables it, a replay recovers them)',
    );
    return reason;
  }

  /** The webhook's run of failed deliveries after this one: counted, started afresh, or as it was (0). */
  private async failureRun(delivery: AttemptedDelivery): Promise<number> {
    // A test is the owner checking the receiver, not the receiver's record.
    if (delivery.event === TEST_EVENT) return 0;
    if (delivery.status === 'succeeded') {
      if (delivery.consecutiveFailures > 0) await this.store.resetFailures(delivery.webhookId);
      return 0;
    }
    if (delivery.status !== 'failed') return 0;
    return this.store.countFailure(delivery.webhookId);
  }
}
