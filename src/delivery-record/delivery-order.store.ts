import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { preparedQuery, query } from '../database/query';
import type { DeliveryRef } from './delivery.store';
import { Statement } from './statement';

/**
 * Which of a key's pending deliveries goes next (docs/receiving.md#ordered-delivery-per-meeting), for `h` over deliveries: the one
 * under way (leased to a worker, or between the attempts of its series) first, so that a late
 * event never overtakes it; then the oldest event by the platform's event_ts (the id breaks a
 * tie the same way everywhere).
 */
const HEAD_ORDER = `(h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
  DESC, h.order_ts, h.id`;

/**
 * The id of the delivery of `d`'s webhook and ordering key that goes next (see HEAD_ORDER).
 * The partial index deliveries_order_idx serves it: a key holds one meeting's deliveries.
 */
export const orderHeadOf = (d: string): string => `(
    SELECT h.id FROM deliveries h
    WHERE h.webhook_id = ${d}.webhook_id AND h.order_key = ${d}.order_key AND h.status = 'pending'
    ORDER BY ${HEAD_ORDER}
    LIMIT 1)`;

/**
 * Whether a delivery to webhook `w` of event `e` (a row with order_key) is ordered (docs/receiving.md#ordered-delivery-per-meeting):
 * the webhook orders by meeting and the event has a key.
 */
export const orderedSql = (w: string, e: string): string =>
  `(${w}.ordering = 'meeting' AND ${e}.order_key IS NOT NULL)`;

/** The order_key and order_ts of a new delivery to `w` of event `e`: null when not ordered. */
export const deliveryOrderSql = (w: string, e: string): string =>
  `CASE WHEN ${orderedSql(w, e)} THEN ${e}.order_key END,
    CASE WHEN ${orderedSql(w, e)} THEN ${e}.order_ts END`;

/**
 * Whether `d` (joined with its webhook `w`) may be sent now as far as ordering goes: it has no
 * ordering key, its webhook no longer orders, or it is its key's head.
 */
export const orderAllows = (d: string, w: string): string =>
  `(${d}.order_key IS NULL OR ${w}.ordering <> 'meeting' OR ${d}.id = ${orderHeadOf(d)})`;

/**
 * Whether `d` is late: an event of its key newer than its own was delivered already. Only for
 * a webhook that orders (`w`); CASE keeps the others from running the subquery.
 */
export const orderLate = (d: string, w: string): string => `CASE
    WHEN ${d}.order_key IS NULL OR ${w}.ordering <> 'meeting' THEN false
    ELSE EXISTS (
      SELECT 1 FROM deliveries s
      WHERE s.webhook_id = ${d}.webhook_id AND s.order_key = ${d}.order_key
        AND s.status = 'succeeded' AND s.order_ts > ${d}.order_ts)
  END`;

// Those of the given webhooks that order their deliveries.
const ORDERED_SQL = `SELECT id FROM webhooks WHERE id = ANY($1::uuid[]) AND ordering = 'meeting'`;

// Those of the given deliveries that a worker could claim now (as ROUTE_SQL) and whose turn it
// is.
const HEADS_SQL = `
  SELECT d.id, d.webhook_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.id = ANY($1::uuid[]) AND d.status = 'pending'
    AND d.next_attempt_at <= now() + interval '1 second'
    AND (d.lease_until IS NULL OR d.lease_until <= now())
    AND ${orderAllows('d', 'w')}`;

// The head of each key of the given deliveries (which just ended), when a worker could claim it
// now: a head waiting for its retry is handed on by its own delayed job.
const NEXT_SQL = `
  SELECT h.id, h.webhook_id
  FROM (SELECT DISTINCT webhook_id, order_key FROM deliveries
        WHERE id = ANY($1::uuid[]) AND order_key IS NOT NULL) k
  CROSS JOIN LATERAL (
    SELECT h.id, h.webhook_id, h.next_attempt_at, h.lease_until FROM deliveries h
    WHERE h.webhook_id = k.webhook_id AND h.order_key = k.order_key AND h.status = 'pending'
    ORDER BY ${HEAD_ORDER}
    LIMIT 1) h
  WHERE h.next_attempt_at <= now() + interval '1 second'
    AND (h.lease_until IS NULL OR h.lease_until <= now())`;

export const DELIVERY_ORDER_STATEMENTS: Statement[] = [
  { method: 'PgDeliveryOrderStore.ordered', sql: ORDERED_SQL },
  { method: 'PgDeliveryOrderStore.heads', prepared: 'delivery_order_heads', sql: HEADS_SQL },
  { method: 'PgDeliveryOrderStore.next', prepared: 'delivery_order_next', sql: NEXT_SQL },
];

/**
 * The order of ordered webhooks' deliveries, read from PostgreSQL (docs/receiving.md#ordered-delivery-per-meeting), so that it holds
 * across worker processes and restarts (the injection token; PgDeliveryOrderStore is real).
 */
export abstract class DeliveryOrderStore {
  /** Those of `webhookIds` with ordering `meeting`. */
  abstract ordered(webhookIds: string[]): Promise<Set<string>>;

  /** Those of `deliveryIds` a worker could claim now and whose turn it is (or not ordered). */
  abstract heads(deliveryIds: string[]): Promise<DeliveryRef[]>;

  /** The deliveries whose turn came with the end of `endedIds`, claimable now. */
  abstract next(endedIds: string[]): Promise<DeliveryRef[]>;
}

type RouteRow = { id: string; webhook_id: string };
const toRoutes = (rows: RouteRow[]): DeliveryRef[] =>
  rows.map((r) => ({ id: r.id, webhookId: r.webhook_id }));

@Injectable()
export class PgDeliveryOrderStore extends DeliveryOrderStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async ordered(webhookIds: string[]): Promise<Set<string>> {
    const rows = await query<{ id: string }>(this.db, ORDERED_SQL, [webhookIds]);
    return new Set(rows.map((r) => r.id));
  }

  async heads(deliveryIds: string[]): Promise<DeliveryRef[]> {
    return toRoutes(
      await preparedQuery<RouteRow>(this.db, 'delivery_order_heads', HEADS_SQL, [deliveryIds]),
    );
  }

  async next(endedIds: string[]): Promise<DeliveryRef[]> {
    return toRoutes(
      await preparedQuery<RouteRow>(this.db, 'delivery_order_next', NEXT_SQL, [endedIds]),
    );
  }
}
