import type { DeliveryRef } from '../../src/delivery-record/delivery.store';
import type { NewEvent } from '../../src/delivery-record/event.store';
import {
  DeploymentEvent,
  DisabledWebhookFacts,
  FailedDeliveryFacts,
  NewOperationalEvent,
  OperationalEventStore,
} from '../../src/delivery-record/operational-events.store';
import type { WebhookEntity } from '../../src/webhooks/webhook.entity';
import { MemoryTables } from './memory-stores';

/**
 * OperationalEventStore over the in-memory tables of the other store fakes: what
 * PgOperationalEventStore reads and writes, held to it by test/stores/operational-event.store.spec.ts.
 */
export class MemoryOperationalEventStore extends OperationalEventStore {
  /** The events stored (those that reached at least one webhook), in order. */
  readonly published: (NewOperationalEvent | DeploymentEvent)[] = [];

  /** @param adminClientIds the configured clients holding `bridge:admin`. */
  constructor(
    readonly tables: MemoryTables = new MemoryTables(),
    private readonly adminClientIds: readonly string[] = [],
  ) {
    super();
  }

  failedDelivery(deliveryId: string): Promise<FailedDeliveryFacts | null> {
    const row = this.tables.deliveries.get(deliveryId);
    return Promise.resolve(
      row?.status === 'failed'
        ? {
            eventId: row.eventId,
            attemptCount: row.attemptCount,
            lastStatusCode: row.lastStatusCode,
            lastError: row.lastError,
          }
        : null,
    );
  }

  disabledWebhook(webhookId: string): Promise<DisabledWebhookFacts | null> {
    const row = this.tables.webhooks.get(webhookId);
    // As the SQL reads it: the column as it is (null for a broker destination).
    const url = row?.url as string;
    return Promise.resolve(row?.disabledAt ? { url, disabledAt: row.disabledAt } : null);
  }

  fanOut(event: NewOperationalEvent): Promise<DeliveryRef[]> {
    const about = this.tables.webhooks.get(event.aboutWebhookId);
    return this.insert(
      event,
      (w) => !!about && w.ownerClientId === about.ownerClientId && w.id !== about.id,
    );
  }

  fanOutToAdmins(event: DeploymentEvent): Promise<DeliveryRef[]> {
    return this.insert(event, (w) => this.adminClientIds.includes(w.ownerClientId));
  }

  fanOutToClient(event: DeploymentEvent, clientId: string): Promise<DeliveryRef[]> {
    return this.insert(event, (w) => w.ownerClientId === clientId);
  }

  private insert(
    event: DeploymentEvent,
    concerns: (webhook: WebhookEntity) => boolean,
  ): Promise<DeliveryRef[]> {
    const targets = [...this.tables.webhooks.values()].filter(
      (w) => concerns(w) && this.tables.receives(w, event.kind, event.body),
    );
    if (targets.length === 0) return Promise.resolve([]);
    const stored: NewEvent = {
      id: event.id,
      kind: event.kind,
      createdAt: event.createdAt,
      data: event.data,
      source: null,
      idempotencyKey: null,
    };
    this.tables.events.set(event.id, stored);
    this.published.push(event);
    return Promise.resolve(
      targets.map((w) => {
        const fields = { eventId: event.id, event: event.kind, body: event.body };
        return { id: this.tables.addDelivery(w.id, fields).id, webhookId: w.id };
      }),
    );
  }
}
