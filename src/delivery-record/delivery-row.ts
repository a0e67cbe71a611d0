import { EventKind } from '../webhooks/subscription-events';
import { DeliveryEntity, DeliveryRequeue, DeliveryStatus } from './delivery.entity';

/**
 * The columns toDelivery reads, for a RETURNING or a SELECT. `body` is the delivery's own bytes:
 * those it was shaped into and sent (docs/templates.md), else those stored with it before the
 * body moved to the event; null: its event's.
 */
export const DELIVERY_COLUMNS = `id, webhook_id, event_id, event,
  coalesce(sent_body, body) AS body, status, attempt_count,
  next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at,
  series_start, requeued_by, requeued_at`;

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event: EventKind;
  body: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  series_start: number;
  requeued_by: DeliveryRequeue | null;
  requeued_at: Date | null;
}

export function toDelivery(row: DeliveryRow): DeliveryEntity {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    event: row.event,
    body: row.body,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    seriesStart: row.series_start,
    requeuedBy: row.requeued_by,
    requeuedAt: row.requeued_at,
  };
}
