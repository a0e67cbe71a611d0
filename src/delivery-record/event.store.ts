import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { preparedQuery, query } from '../database/query';
import { EventKind, PublishedKind } from '../webhooks/subscription-events';
import { stringifyPrecise } from '../common/precise-json';
import {
  EventSource,
  bodyOfSerialised,
  deliveryBody,
  jsonbOfSerialised,
  toJsonb,
} from './delivery-body';
import { DELIVERY_COLUMNS, DeliveryRow, toDelivery } from './delivery-row';
import { DeliveryEntity } from './delivery.entity';
import { deliveryOrderSql } from './order-sql';
import { DeliveryRef, deliveryRefsOf } from './delivery.store';
import { eventBodyJsonb } from './fan-out-filter';
import { receivesSql, receivingClients } from './fan-out-rule';
import { Statement } from './statement';

/** An event about to be published; `deliveryBody` of it is what its deliveries send. */
export interface NewEvent {
  id: string;
  kind: EventKind;
  createdAt: Date;
  /** An object, except a platform event as it came whose payload was not one (null, …). */
  data: unknown;
  source: EventSource | null;
  idempotencyKey: string | null;
  /** The platform object's uuid, for ordered webhooks (docs/receiving.md#ordered-delivery-per-meeting); ordered by source.event_ts. */
  orderKey?: string | null;
  /** W3C traceparent its deliveries' attempts continue (docs/operations.md); absent or null: none. */
  traceContext?: string | null;
}

/**
 * An event published earlier under an idempotency key, with the deliveries it fanned out to.
 * Only publish() sets keys, and it never takes the test event.
 */
export interface KeyedEvent {
  eventId: string;
  kind: PublishedKind;
  data: unknown;
  deliveries: DeliveryRef[];
}

/** The events table and the fan-out into deliveries (the injection token; PgEventStore is real). */
export abstract class EventStore {
  /**
   * Stores the event and a pending delivery per active webhook subscribed to its kind (for a
   * platform event also those subscribed to `zoom.*`; one each however many match), at
   * once; returns the new deliveries, or null when the idempotency key is taken (then
   * nothing is written).
   */
  abstract fanOut(event: NewEvent): Promise<DeliveryRef[] | null>;

  /** The event stored under `idempotencyKey`, if any. */
  abstract findByIdempotencyKey(idempotencyKey: string): Promise<KeyedEvent | null>;

  /**
   * Stores a test event and its one delivery to `webhookId`, only while that webhook is
   * active; null otherwise.
   */
  abstract insertTest(webhookId: string, event: NewEvent): Promise<DeliveryEntity | null>;
}

// One statement (one round trip, one implicit transaction) for a batch of events: each event
// and a delivery per webhook that receives it (fan-out-rule.ts, filters included; $8 the API
// clients). An event
// whose idempotency key is taken inserts nothing and is missing from the result. The body is
// stored once, on the event, whatever the number of its deliveries.
// A delivery to a webhook with ordering 'meeting' keeps the event's ordering key (docs/receiving.md#ordered-delivery-per-meeting).
const FAN_OUT_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[],
                         $6::timestamptz[], $7::text[], $9::text[], $10::text[], $11::bigint[])
      AS i(id, kind, data, source, idempotency_key, created_at, body, trace_context, order_key,
           order_ts)
  ),
  ek AS (
    INSERT INTO event_keys (idempotency_key, created_at)
    SELECT idempotency_key, created_at FROM input WHERE idempotency_key IS NOT NULL
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING idempotency_key
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body, order_key,
                        order_ts)
    SELECT id, kind, data, source, idempotency_key, created_at, body, order_key, order_ts
    FROM input
    WHERE idempotency_key IS NULL
       OR id IN (SELECT DISTINCT ON (k.idempotency_key) n.id FROM ek k
                 JOIN input n ON n.idempotency_key = k.idempotency_key
                 ORDER BY k.idempotency_key, n.id)
    RETURNING id
  ),
  d AS (
    INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context,
                            order_key, order_ts)
    SELECT w.id, i.id, i.kind, now(), i.trace_context,
      ${deliveryOrderSql('w', 'i')}
    FROM ev JOIN input i ON i.id = ev.id
    JOIN webhooks w ON ${receivesSql({
      webhook: 'w',
      kind: 'i.kind',
      clients: '$8::text[]',
      body: eventBodyJsonb('i'),
      event: 'i',
    })}
    RETURNING id, event_id, webhook_id
  )
  SELECT ev.id, array_remove(array_agg(d.id::text), NULL) AS delivery_ids,
    array_remove(array_agg(d.webhook_id::text), NULL) AS webhook_ids
  FROM ev LEFT JOIN d ON d.event_id = ev.id
  GROUP BY ev.id`;

// The aggregates of a group see its rows in one order: the two arrays pair up.
interface FanOutRow {
  id: string;
  delivery_ids: string[];
  webhook_ids: string[];
}

const KEYED_EVENT_SQL = `
  SELECT e.id, e.kind, e.data,
    coalesce(array_agg(d.id::text ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL), '{}'::text[])
      AS delivery_ids,
    coalesce(array_agg(d.webhook_id::text ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL),
      '{}'::text[]) AS webhook_ids
  FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
  WHERE e.idempotency_key = $1
  GROUP BY e.id, e.created_at`;

interface KeyedEventRow {
  id: string;
  kind: PublishedKind;
  data: unknown;
  delivery_ids: string[];
  webhook_ids: string[];
}

// The test event goes to its one webhook, and only while that webhook is active.
const TEST_SQL = `
  WITH w AS (SELECT id FROM webhooks WHERE id = $1 AND active),
  ev AS (
    INSERT INTO events (id, kind, data, source, created_at, body)
    SELECT $2, $3, $4, NULL, $5, $6 FROM w
    RETURNING id
  )
  INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context)
  SELECT $1, ev.id, $3, now(), $7 FROM ev
  RETURNING ${DELIVERY_COLUMNS}`;

/** An event's ordering key and its place in it: only with both is the event ordered. */
export function orderOf(event: NewEvent): { key: string; ts: number } | null {
  if (!event.orderKey || !event.source) return null;
  return { key: event.orderKey, ts: event.source.event_ts };
}

export const EVENT_STORE_STATEMENTS: Statement[] = [
  { method: 'PgEventStore.fanOut', prepared: 'dispatcher_fan_out', sql: FAN_OUT_SQL },
  { method: 'PgEventStore.findByIdempotencyKey', sql: KEYED_EVENT_SQL },
  { method: 'PgEventStore.insertTest', sql: TEST_SQL },
];

@Injectable()
export class PgEventStore extends EventStore {
  // Concurrent publishes (inbound workers, many at once) share one statement and one commit.
  private readonly fanOuts = new MicroBatcher<NewEvent, DeliveryRef[] | null>(
    (events) => this.fanOutMany(events),
    { keyOf: (event) => event.idempotencyKey ?? event.id },
  );

  private readonly clientIds: string[];

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.clientIds = receivingClients(config);
  }

  fanOut(event: NewEvent): Promise<DeliveryRef[] | null> {
    return this.fanOuts.submit(event);
  }

  /** The fan-out of the events published in one event-loop turn; null for a taken key. */
  private async fanOutMany(events: NewEvent[]): Promise<(DeliveryRef[] | null)[]> {
    const column = <T>(pick: (e: NewEvent, i: number) => T) => events.map(pick);
    // Each event's data serialised once for its jsonb and its body: a large one (a meeting's
    // attendance, docs/benchmarks.md#meeting-attendance) is not written twice.
    const data = column((e) => stringifyPrecise(e.data));
    const rows = await preparedQuery<FanOutRow>(this.db, 'dispatcher_fan_out', FAN_OUT_SQL, [
      column((e) => e.id),
      column((e) => e.kind),
      column((e, i) => jsonbOfSerialised(e.data, data[i])),
      column((e) => (e.source === null ? null : toJsonb(e.source))),
      column((e) => e.idempotencyKey),
      column((e) => e.createdAt),
      column((e, i) => bodyOfSerialised(e, data[i], JSON.stringify(e.source))),
      this.clientIds,
      column((e) => e.traceContext ?? null),
      column((e) => orderOf(e)?.key ?? null),
      column((e) => orderOf(e)?.ts ?? null),
    ]);
    const inserted = new Map(rows.map((r) => [r.id, deliveryRefsOf(r)]));
    return events.map((e) => inserted.get(e.id) ?? null);
  }

  async findByIdempotencyKey(idempotencyKey: string): Promise<KeyedEvent | null> {
    const [row] = await query<KeyedEventRow>(this.db, KEYED_EVENT_SQL, [idempotencyKey]);
    if (!row) return null;
    return { eventId: row.id, kind: row.kind, data: row.data, deliveries: deliveryRefsOf(row) };
  }

  async insertTest(webhookId: string, event: NewEvent): Promise<DeliveryEntity | null> {
    const [row] = await query<DeliveryRow>(this.db, TEST_SQL, [
      webhookId,
      event.id,
      event.kind,
      JSON.stringify(event.data),
      event.createdAt,
      deliveryBody(event),
      event.traceContext ?? null,
    ]);
    return row ? toDelivery(row) : null;
  }
}
