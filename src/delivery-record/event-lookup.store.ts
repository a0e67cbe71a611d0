import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cursor } from '../common/cursor';
import { parsePrecise } from '../common/precise-json';
import { query } from '../database/query';
import { DeliveryStatus } from './delivery.entity';
import { Statement } from './statement';

export interface LookedUpEvent {
  id: string;
  kind: string;
  createdAt: Date;
  /** As its notifications carry it: numbers by their own text (PreciseNumber where needed). */
  data: unknown;
  source: Record<string, unknown> | null;
}

export interface LookedUpDelivery {
  id: string;
  webhookId: string;
  status: DeliveryStatus;
  attemptCount: number;
  lastStatusCode: number | null;
  completedAt: Date | null;
}

export interface EventFilter {
  trackingId?: string;
  kind?: string;
  since?: Date;
  until?: Date;
  cursor: Cursor | null;
  limit: number;
}

/** Events as their owners see them (the injection token; PgEventLookupStore is the real one). */
export abstract class EventLookupStore {
  /** The event with its deliveries to `ownerClientId`'s webhooks; null when it has none. */
  abstract findOwned(
    ownerClientId: string,
    eventId: string,
  ): Promise<{ event: LookedUpEvent; deliveries: LookedUpDelivery[] } | null>;

  /**
   * `ownerClientId`'s events (those with a delivery to one of its webhooks) matching the
   * filter, newest first, after the cursor: `limit + 1` of them at most (see toPage).
   */
  abstract listOwned(ownerClientId: string, filter: EventFilter): Promise<LookedUpEvent[]>;
}

interface EventRow {
  id: string;
  kind: string;
  created_at: Date;
  /** The body its deliveries send; null only for events stored before bodies were kept. */
  body: string | null;
  /** data as jsonb text, read only where there is no body. */
  data_text: string | null;
  source: Record<string, unknown> | null;
}

/**
 * `data` as its deliveries sent it: read from the body they send, with numbers by their own
 * text (the jsonb copy writes `1E2` as `100`, and the driver's JSON.parse turns `1e400` into
 * null and `1.50` into 1.5).
 */
function dataOf(r: EventRow): unknown {
  if (r.body !== null) return (parsePrecise(r.body) as { data: unknown }).data;
  return r.data_text === null ? null : parsePrecise(r.data_text);
}

const toEvent = (r: EventRow): LookedUpEvent => ({
  id: r.id,
  kind: r.kind,
  createdAt: r.created_at,
  data: dataOf(r),
  source: r.source,
});

const EVENT_COLUMNS = `e.id, e.kind, e.created_at, e.body,
  CASE WHEN e.body IS NULL THEN e.data::text END AS data_text, e.source`;

// The event by its key, its deliveries by deliveries_event_webhook_idx, each webhook by its key.
const OWNED_SQL = `
  SELECT ${EVENT_COLUMNS}, d.id AS delivery_id, d.webhook_id,
    d.status, d.attempt_count, d.last_status_code, d.completed_at
  FROM events e
  JOIN deliveries d ON d.event_id = e.id
  JOIN webhooks w ON w.id = d.webhook_id AND w.owner_client_id = $2
  WHERE e.id = $1
  ORDER BY d.created_at, d.id`;

// "The caller's": the event has a delivery to one of its webhooks (deliveries_event_webhook_idx
// leads with event_id). Newest first along events_created_idx, or, given a tracking id, along
// events_tracking_id_idx.
const OWNS = `EXISTS (SELECT 1 FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.event_id = e.id AND w.owner_client_id = $1)`;

/** listOwned's statement for the filter: a condition and a parameter per field set. */
function listOwnedQuery(ownerClientId: string, filter: EventFilter) {
  const params: unknown[] = [ownerClientId];
  const where = [OWNS];
  const add = (condition: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  // Written as the partial index's own expression and predicate, so the planner can use it.
  if (filter.trackingId !== undefined) {
    add((n) => `e.source->>'tracking_id' = ${n}`, filter.trackingId);
    where.push(`e.source->>'tracking_id' IS NOT NULL`);
  }
  if (filter.kind !== undefined) add((n) => `e.kind = ${n}`, filter.kind);
  if (filter.since !== undefined) add((n) => `e.created_at >= ${n}`, filter.since);
  if (filter.until !== undefined) add((n) => `e.created_at < ${n}`, filter.until);
  if (filter.cursor !== null) {
    params.push(filter.cursor.createdAt, filter.cursor.id);
    where.push(
      `(e.created_at, e.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
    );
  }
  params.push(filter.limit + 1);
  const sql = `SELECT ${EVENT_COLUMNS} FROM events e
       WHERE ${where.join(' AND ')}
       ORDER BY e.created_at DESC, e.id DESC LIMIT $${params.length}`;
  return { sql, params };
}

const EVERY_FIELD: EventFilter = {
  trackingId: 't',
  kind: 'k',
  since: new Date(0),
  until: new Date(0),
  cursor: { createdAt: '', id: '' },
  limit: 1,
};

export const EVENT_LOOKUP_STATEMENTS: Statement[] = [
  { method: 'PgEventLookupStore.findOwned', sql: OWNED_SQL },
  {
    method: 'PgEventLookupStore.listOwned (no filter)',
    sql: listOwnedQuery('', { cursor: null, limit: 1 }).sql,
  },
  {
    method: 'PgEventLookupStore.listOwned (every filter)',
    sql: listOwnedQuery('', EVERY_FIELD).sql,
  },
];

@Injectable()
export class PgEventLookupStore extends EventLookupStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async findOwned(ownerClientId: string, eventId: string) {
    const rows = await query<
      EventRow & {
        delivery_id: string;
        webhook_id: string;
        status: DeliveryStatus;
        attempt_count: number;
        last_status_code: number | null;
        completed_at: Date | null;
      }
    >(this.db, OWNED_SQL, [eventId, ownerClientId]);
    if (rows.length === 0) return null;
    return {
      event: toEvent(rows[0]),
      deliveries: rows.map((r) => ({
        id: r.delivery_id,
        webhookId: r.webhook_id,
        status: r.status,
        attemptCount: r.attempt_count,
        lastStatusCode: r.last_status_code,
        completedAt: r.completed_at,
      })),
    };
  }

  async listOwned(ownerClientId: string, filter: EventFilter): Promise<LookedUpEvent[]> {
    const { sql, params } = listOwnedQuery(ownerClientId, filter);
    return (await query<EventRow>(this.db, sql, params)).map(toEvent);
  }
}
