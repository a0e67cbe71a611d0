import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Cursor } from '../common/cursor';
import { query } from '../database/query';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import { DeliveryEntity, DeliveryStatus } from './delivery.entity';
import { DELIVERY_COLUMNS, DeliveryRow, toDelivery } from './delivery-row';
import { Statement } from './statement';

/** Which of a webhook's deliveries the log lists. */
export interface DeliveryLogFilter {
  status?: DeliveryStatus;
  event?: string;
}

// Newest first, by the keyset of docs/api.md#pagination; a filter left out is NULL, which
// PostgreSQL folds away when it plans the statement with its values.
const PAGE_SQL = `
  SELECT ${DELIVERY_COLUMNS} FROM deliveries d
  WHERE d.webhook_id = $1
    AND ($2::text IS NULL OR d.status = $2)
    AND ($3::text IS NULL OR d.event = $3)
    AND ($4::timestamptz IS NULL OR (d.created_at, d.id) < ($4::timestamptz, $5::uuid))
  ORDER BY d.created_at DESC, d.id DESC
  LIMIT $6`;

// The body it sends is its event's (a delivery stored before the body moved there has its own).
const WITH_EVENT_SQL = `
  SELECT ${DELIVERY_COLUMNS}, (SELECT e.body FROM events e WHERE e.id = d.event_id) AS event_body
  FROM deliveries d
  WHERE d.id = $1 AND d.webhook_id = $2`;

const ATTEMPTS_SQL = `
  SELECT id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body
  FROM delivery_attempts
  WHERE delivery_id = $1
  ORDER BY attempt`;

export const DELIVERY_LOG_STATEMENTS: Statement[] = [
  { method: 'DeliveryLogStore.page', sql: PAGE_SQL },
  { method: 'DeliveryLogStore.withEvent', sql: WITH_EVENT_SQL },
  { method: 'DeliveryLogStore.attemptsOf', sql: ATTEMPTS_SQL },
];

interface AttemptRow {
  id: string;
  delivery_id: string;
  attempt: number;
  started_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

/** The delivery log's reads (docs/api.md): a webhook's deliveries, one with its event, attempts. */
@Injectable()
export class DeliveryLogStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The webhook's deliveries, newest first after `cursor`: `limit + 1` at most (see toPage). */
  async page(
    webhookId: string,
    filter: DeliveryLogFilter,
    cursor: Cursor | null,
    limit: number,
  ): Promise<DeliveryEntity[]> {
    const rows = await query<DeliveryRow>(this.db, PAGE_SQL, [
      webhookId,
      filter.status ?? null,
      filter.event ?? null,
      cursor?.createdAt ?? null,
      cursor?.id ?? null,
      limit + 1,
    ]);
    return rows.map(toDelivery);
  }

  /** The webhook's delivery with the body of its event row. */
  async withEvent(
    webhookId: string,
    deliveryId: string,
  ): Promise<(DeliveryEntity & { eventBody: string | null }) | null> {
    const [row] = await query<DeliveryRow & { event_body: string | null }>(
      this.db,
      WITH_EVENT_SQL,
      [deliveryId, webhookId],
    );
    return row ? { ...toDelivery(row), eventBody: row.event_body } : null;
  }

  /** The delivery's attempts, first first. */
  async attemptsOf(deliveryId: string): Promise<DeliveryAttemptEntity[]> {
    const rows = await query<AttemptRow>(this.db, ATTEMPTS_SQL, [deliveryId]);
    return rows.map((r) => ({
      id: r.id,
      deliveryId: r.delivery_id,
      attempt: r.attempt,
      startedAt: r.started_at,
      durationMs: r.duration_ms,
      statusCode: r.status_code,
      error: r.error,
      responseBody: r.response_body,
    }));
  }
}
