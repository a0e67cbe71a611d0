import { newRowId } from '../../database/row-id';
import { Injectable, Logger } from '@nestjs/common';
import { WebhookDisabledReason } from '../../webhooks/webhook.entity';
import { OperationalEvent } from '../../webhooks/subscription-events';
import { deliveryBody } from '../../delivery-record/delivery-body';
import { DispatcherService } from '../publish/dispatcher.service';
import {
  DeploymentEvent,
  OperationalEventStore,
} from '../../delivery-record/operational-events.store';
import { DeliveryRef } from '../../delivery-record/delivery.store';

/**
 * An attempt whose follow-ups are told (docs/operations.md): it disabled its webhook, ended its
 * delivery failed after its retries, or both.
 */
export interface EndedAttempt {
  deliveryId: string;
  webhookId: string;
  event: string;
  /** Why the attempt disabled its webhook; null: it did not. */
  disabled: WebhookDisabledReason | null;
  /** Its delivery ended failed. */
  failed: boolean;
  /** The attempt span's traceparent: a bridge.delivery.failed's deliveries continue that trace. */
  traceContext?: string | null;
}

/** What bridge.reconciliation.completed says of a run that ended. */
export interface ReconciliationCompleted {
  id: string;
  trigger: string;
  since: string;
  until: string;
  status: string;
  created: Record<string, number>;
}

/** An operational event about a webhook, as read from the record. */
interface Told {
  kind: OperationalEvent;
  data: Record<string, unknown>;
  /** The traceparent its deliveries continue; null: none. */
  traceContext: string | null;
}

/** One operational event to publish: `what` it is about (for the log), and its reading. */
interface Report {
  what: string;
  /** Reads it from the record; null when there is nothing to report. */
  read: () => Promise<Told | null>;
}

/** Events about the service's own events are never reported again: no loop can start. */
const isOperational = (event: string) => event.startsWith('bridge.');

/**
 * The operational events of docs/operations.md: bridge.webhook.disabled and bridge.delivery.failed, sent
 * to the same client's other webhooks that subscribe to them, signed, retried and logged like
 * every notification. Best effort: the fact they report is already recorded (the webhook is
 * disabled, the delivery failed), so a failure to publish is logged and the work goes on.
 */
@Injectable()
export class OperationalEventsService {
  private readonly logger = new Logger(OperationalEventsService.name);

  constructor(
    private readonly store: OperationalEventStore,
    private readonly dispatcher: DispatcherService,
  ) {}

  /**
   * After an attempt that disabled its webhook or ended its delivery failed: first
   * bridge.webhook.disabled, then bridge.delivery.failed, to the webhook owner's other webhooks,
   * each read from the record as the attempt left it. An attempt at a bridge.* event reports
   * nothing.
   */
  async attemptEnded(attempt: EndedAttempt): Promise<void> {
    if (isOperational(attempt.event)) return;
    const reports: Report[] = [];
    if (attempt.disabled !== null) {
      const reason = attempt.disabled;
      reports.push({
        what: `webhook ${attempt.webhookId}`,
        read: async () => {
          const facts = await this.store.disabledWebhook(attempt.webhookId);
          if (facts === null) return null;
          const data = {
            webhook_id: attempt.webhookId,
            url: facts.url,
            reason,
            disabled_at: facts.disabledAt.toISOString(),
          };
          return { kind: 'bridge.webhook.disabled', data, traceContext: null };
        },
      });
    }
    if (attempt.failed) {
      reports.push({
        what: `delivery ${attempt.deliveryId}`,
        read: async () => {
          const facts = await this.store.failedDelivery(attempt.deliveryId);
          if (facts === null) return null;
          const data = {
            delivery_id: attempt.deliveryId,
            webhook_id: attempt.webhookId,
            event: attempt.event,
            event_id: facts.eventId,
            attempt_count: facts.attemptCount,
            last_status_code: facts.lastStatusCode,
            last_error: facts.lastError,
          };
          // Its deliveries join the trace of the attempt that caused it, when known.
          return {
            kind: 'bridge.delivery.failed',
            data,
            traceContext: attempt.traceContext ?? null,
          };
        },
      });
    }
    await this.publish(attempt.webhookId, reports);
  }

  /** After a reconciliation run ended (docs/reconciliation.md): to bridge:admin clients. */
  async reconciliationCompleted(data: ReconciliationCompleted): Promise<void> {
    await this.guarded(`reconciliation ${data.id}`, () =>
      this.publishTo('bridge.reconciliation.completed', { ...data }, (event) =>
        this.store.fanOutToAdmins(event),
      ),
    );
  }

  /**
   * An installed account was disconnected or deauthorized (docs/accounts.md): to the client
   * that installed it.
   */
  async accountChanged(
    kind: 'bridge.account.disconnected' | 'bridge.account.deauthorized',
    clientId: string,
    data: { account_id: string } & Record<string, unknown>,
  ): Promise<void> {
    await this.guarded(`account ${data.account_id}`, () =>
      this.publishTo(kind, data, (event) => this.store.fanOutToClient(event, clientId)),
    );
  }

  /**
   * Publishes the reports about webhook `aboutWebhookId` in turn, each on its own: what it reads
   * (nothing when that is null) stored with one delivery per other webhook of its owner that
   * receives it, which are then queued.
   */
  private async publish(aboutWebhookId: string, reports: Report[]): Promise<void> {
    for (const report of reports) {
      await this.guarded(report.what, async () => {
        const told = await report.read();
        if (told === null) return;
        const { kind, data, traceContext } = told;
        const event = { id: newRowId(), kind, createdAt: new Date(), data, source: null };
        const deliveries = await this.store.fanOut({
          ...event,
          body: deliveryBody(event),
          aboutWebhookId,
          traceContext,
        });
        if (deliveries.length > 0) await this.dispatcher.queueDeliveries(deliveries);
      });
    }
  }

  private async publishTo(
    kind: OperationalEvent,
    data: Record<string, unknown>,
    fanOut: (event: DeploymentEvent) => Promise<DeliveryRef[]>,
  ): Promise<void> {
    const event = { id: newRowId(), kind, createdAt: new Date(), data, source: null };
    const deliveries = await fanOut({ ...event, body: deliveryBody(event), traceContext: null });
    if (deliveries.length > 0) await this.dispatcher.queueDeliveries(deliveries);
  }

  /** Best effort: a failure to publish is logged, never thrown. */
  private async guarded(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.error(
        `operational event about ${what} not published: ${(error as Error).message}`,
      );
    }
  }
}
