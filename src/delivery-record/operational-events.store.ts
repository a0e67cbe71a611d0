import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { query } from '../database/query';
import { OperationalEvent } from '../webhooks/subscription-events';
import { DeliveryRef } from './delivery.store';
import { filterMatches } from './fan-out-filter';
import { Statement } from './statement';
import { receivingClients } from './fan-out-rule';

/** An operational event about one webhook, ready to store (body already serialised). */
export interface NewOperationalEvent {
  id: string;
  kind: OperationalEvent;
  createdAt: Date;
  data: Record<string, unknown>;
  body: string;
  /** The webhook it is about: its owner's other webhooks receive it, never this one. */
  aboutWebhookId: string;
  traceContext: string | null;
}

/** An operational event about the deployment itself (no webhook concerned). */
export type DeploymentEvent = Omit<NewOperationalEvent, 'aboutWebhookId'>;

/** What a bridge.delivery.failed says of the delivery, as its record stands. */
export interface FailedDeliveryFacts {
  eventId: string;
  attemptCount: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** What a bridge.webhook.disabled says of the webhook. */
export interface DisabledWebhookFacts {
  url: string;
  disabledAt: Date;
}

/** The reads and the fan-out of operational events (the injection token; Pg… is the real one). */
export abstract class OperationalEventStore {
  abstract failedDelivery(deliveryId: string): Promise<FailedDeliveryFacts | null>;

  abstract disabledWebhook(webhookId: string): Promise<DisabledWebhookFacts | null>;

  /**
   * Stores the event and one delivery per other active webhook of the same owner subscribed to
   * its kind; stores nothing (and returns none) when there is no such webhook.
   */
  abstract fanOut(event: NewOperationalEvent): Promise<DeliveryRef[]>;

  /**
   * Stores an event about the deployment (no webhook concerned) and one delivery per active
   * webhook subscribed to its kind whose owner holds `bridge:admin` (in AUTH_CLIENTS now);
   * nothing when there is none.
   */
  abstract fanOutToAdmins(event: DeploymentEvent): Promise<DeliveryRef[]>;

  /**
   * Stores an event about one client's platform account (docs/accounts.md) and one delivery per
   * active webhook of `clientId` (still in AUTH_CLIENTS) subscribed to its kind.
   */
  abstract fanOutToClient(event: DeploymentEvent, clientId: string): Promise<DeliveryRef[]>;
}

const FAILED_SQL = `SELECT event_id, attempt_count, last_status_code, last_error FROM deliveries
       WHERE id = $1 AND status = 'failed'`;

const DISABLED_SQL = `SELECT url, disabled_at FROM webhooks WHERE id = $1`;

// The active webhooks subscribed to the kind (webhooks_active_events_idx) of the clients $8 (in
// AUTH_CLIENTS, docs/api.md) whose filter takes the body ($6, the notification body as
// delivered), read once for both inserts; with a webhook concerned ($1), only its owner's others.
const FAN_OUT_SQL = `
  WITH targets AS (
    SELECT w.id FROM webhooks w LEFT JOIN webhooks about ON about.id = $1
    WHERE w.active AND w.events @> ARRAY[$3]::text[] AND w.owner_client_id = ANY($8::text[])
      AND ($1::uuid IS NULL OR (w.owner_client_id = about.owner_client_id AND w.id <> about.id))
      AND ${filterMatches('w', '$6::jsonb')}
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, created_at, body)
    SELECT $2, $3, $4::jsonb, NULL, $5, $6 WHERE EXISTS (SELECT 1 FROM targets)
    RETURNING id
  )
  INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context)
  SELECT t.id, ev.id, $3, now(), $7 FROM ev, targets t
  RETURNING id, webhook_id`;

export const OPERATIONAL_EVENT_STATEMENTS: Statement[] = [
  { method: 'PgOperationalEventStore.failedDelivery', sql: FAILED_SQL },
  { method: 'PgOperationalEventStore.disabledWebhook', sql: DISABLED_SQL },
  { method: 'PgOperationalEventStore.fanOut, fanOutToAdmins', sql: FAN_OUT_SQL },
];

@Injectable()
export class PgOperationalEventStore extends OperationalEventStore {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async failedDelivery(deliveryId: string): Promise<FailedDeliveryFacts | null> {
    const [row] = await query<{
      event_id: string;
      attempt_count: number;
      last_status_code: number | null;
      last_error: string | null;
    }>(this.db, FAILED_SQL, [deliveryId]);
    return row
      ? {
          eventId: row.event_id,
          attemptCount: row.attempt_count,
          lastStatusCode: row.last_status_code,
          lastError: row.last_error,
        }
      : null;
  }

  async disabledWebhook(webhookId: string): Promise<DisabledWebhookFacts | null> {
    const [row] = await query<{ url: string; disabled_at: Date | null }>(this.db, DISABLED_SQL, [
      webhookId,
    ]);
    return row?.disabled_at ? { url: row.url, disabledAt: row.disabled_at } : null;
  }

  fanOut(event: NewOperationalEvent): Promise<DeliveryRef[]> {
    return this.insert(event, event.aboutWebhookId, receivingClients(this.config));
  }

  fanOutToAdmins(event: DeploymentEvent): Promise<DeliveryRef[]> {
    const admins = this.config.auth.clients.filter((c) => c.scopes.includes('bridge:admin'));
    return this.insert(
      event,
      null,
      admins.map((c) => c.clientId),
    );
  }

  fanOutToClient(event: DeploymentEvent, clientId: string): Promise<DeliveryRef[]> {
    const configured = receivingClients(this.config).includes(clientId);
    return this.insert(event, null, configured ? [clientId] : []);
  }

  private async insert(
    event: DeploymentEvent,
    aboutWebhookId: string | null,
    clients: string[],
  ): Promise<DeliveryRef[]> {
    const rows = await query<{ id: string; webhook_id: string }>(this.db, FAN_OUT_SQL, [
      aboutWebhookId,
      event.id,
      event.kind,
      JSON.stringify(event.data),
      event.createdAt,
      event.body,
      event.traceContext,
      clients,
    ]);
    return rows.map((r) => ({ id: r.id, webhookId: r.webhook_id }));
  }
}
