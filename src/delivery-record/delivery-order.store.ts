import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { preparedQuery, query } from '../database/query';
import type { DeliveryRef } from './delivery.store';
import { HEAD_ORDER, orderAllows } from './order-sql';
import { Statement } from './statement';

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
