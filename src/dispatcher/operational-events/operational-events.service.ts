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

/** A delivery that just ended failed after its retries. */
export interface FailedDelivery {
  deliveryId: string;
  webhookId: string;
  event: string;
  /** The attempt span's traceparent: the event's deliveries continue that trace. */
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

  /** After a delivery ended `failed` after its retries. */
  async deliveryFailed(delivery: FailedDelivery): Promise<void> {
    if (isOperational(delivery.event)) return;
    await this.guarded(`delivery ${delivery.deliveryId}`, async () => {
      const facts = await this.store.failedDelivery(delivery.deliveryId);
      if (facts === null) return;
      await this.publish('bridge.delivery.failed', delivery.webhookId, delivery.traceContext, {
        delivery_id: delivery.deliveryId,
        webhook_id: delivery.webhookId,
        event: delivery.event,
        event_id: facts.eventId,
        attempt_count: facts.attemptCount,
        last_status_code: facts.lastStatusCode,
        last_error: facts.lastError,
      });
    });
  }

  /** After the service disabled a webhook; `cause` is the event of the delivery that did it. */
  async webhookDisabled(
    webhookId: string,
    reason: WebhookDisabledReason,
    cause: string,
  ): Promise<void> {
    if (isOperational(cause)) return;
    await this.guarded(`webhook ${webhookId}`, async () => {
      const facts = await this.store.disabledWebhook(webhookId);
      if (facts === null) return;
      await this.publish('bridge.webhook.disabled', webhookId, null, {
        webhook_id: webhookId,
        url: facts.url,
        reason,
        disabled_at: facts.disabledAt.toISOString(),
      });
    });
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

  private async publishTo(
    kind: OperationalEvent,
    data: Record<string, unknown>,
    fanOut: (event: DeploymentEvent) => Promise<DeliveryRef[]>,
  ): Promise<void> {
    const event = { id: newRowId(), kind, createdAt: new Date(), data, source: null };
    const deliveries = await fanOut({ ...event, body: deliveryBody(event), traceContext: null });
    if (deliveries.length > 0) await this.dispatcher.queueDeliveries(deliveries);
  }

  private async publish(
    kind: OperationalEvent,
    aboutWebhookId: string,
    traceContext: string | null | undefined,
    data: Record<string, unknown>,
  ): Promise<void> {
    const event = { id: newRowId(), kind, createdAt: new Date(), data, source: null };
    const deliveries = await this.store.fanOut({
      ...event,
      body: deliveryBody(event),
      aboutWebhookId,
      // Its deliveries join the trace of the attempt that caused it, when known.
      traceContext: traceContext ?? null,
    });
    if (deliveries.length > 0) await this.dispatcher.queueDeliveries(deliveries);
  }

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
