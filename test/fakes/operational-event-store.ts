import type { DeliveryRef } from '../../src/delivery-record/delivery.store';
import {
  DeploymentEvent,
  DisabledWebhookFacts,
  FailedDeliveryFacts,
  NewOperationalEvent,
  OperationalEventStore,
} from '../../src/delivery-record/operational-events.store';

/** OperationalEventStore in memory: the facts it is given, and the events fanned out. */
export class MemoryOperationalEventStore extends OperationalEventStore {
  readonly failed = new Map<string, FailedDeliveryFacts>();
  readonly disabled = new Map<string, DisabledWebhookFacts>();
  /** Per webhook, the other webhooks (same owner) subscribed to each operational kind. */
  readonly subscribers = new Map<string, Record<string, string[]>>();
  /** The webhooks of bridge:admin clients subscribed to each operational kind. */
  readonly adminSubscribers: Record<string, string[]> = {};
  readonly published: (NewOperationalEvent | DeploymentEvent)[] = [];

  failedDelivery(deliveryId: string): Promise<FailedDeliveryFacts | null> {
    return Promise.resolve(this.failed.get(deliveryId) ?? null);
  }

  disabledWebhook(webhookId: string): Promise<DisabledWebhookFacts | null> {
    return Promise.resolve(this.disabled.get(webhookId) ?? null);
  }

  fanOut(event: NewOperationalEvent): Promise<DeliveryRef[]> {
    const targets = this.subscribers.get(event.aboutWebhookId)?.[event.kind] ?? [];
    if (targets.length === 0) return Promise.resolve([]);
    this.published.push(event);
    return Promise.resolve(targets.map((webhookId, i) => ({ id: `${event.id}-${i}`, webhookId })));
  }

  /** Per client, its webhooks subscribed to each operational kind. */
  readonly clientSubscribers = new Map<string, Record<string, string[]>>();

  fanOutToClient(event: DeploymentEvent, clientId: string): Promise<DeliveryRef[]> {
    const targets = this.clientSubscribers.get(clientId)?.[event.kind] ?? [];
    if (targets.length === 0) return Promise.resolve([]);
    this.published.push(event);
    return Promise.resolve(targets.map((webhookId, i) => ({ id: `${event.id}-${i}`, webhookId })));
  }

  fanOutToAdmins(event: DeploymentEvent): Promise<DeliveryRef[]> {
    const targets = this.adminSubscribers[event.kind] ?? [];
    if (targets.length === 0) return Promise.resolve([]);
    this.published.push(event);
    return Promise.resolve(targets.map((webhookId, i) => ({ id: `${event.id}-${i}`, webhookId })));
  }
}
