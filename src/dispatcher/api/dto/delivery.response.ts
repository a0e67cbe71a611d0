import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  DELIVERY_REQUEUES,
  DELIVERY_STATUSES,
  DeliveryEntity,
  DeliveryRequeue,
  DeliveryStatus,
} from '../../../delivery-record/delivery.entity';
import { DeliveryAttemptEntity } from '../../../delivery-record/delivery-attempt.entity';
import { RESPONSE_EXCERPT_BYTES } from '../../engine/delivery-sender.service';

const DELIVERY_ID = '7d6f0c64-58b1-4a5e-9c1e-3f7f6b1f2a10';
const WEBHOOK_ID = '0b5e5a8e-3c1d-4f47-8d0a-6a3c2f4b9e11';
const EVENT_ID = 'c3b1e2d4-5f60-4a7b-8c9d-0e1f2a3b4c5d';

/** A delivery of one event to one webhook (docs/api.md#webhooks). */
export class DeliveryResponse {
  @ApiProperty({ format: 'uuid', example: DELIVERY_ID })
  id: string;

  @ApiProperty({ format: 'uuid', example: WEBHOOK_ID })
  webhook_id: string;

  @ApiProperty({ example: 'job.started', description: 'The event kind (webhook.test for tests)' })
  event: string;

  @ApiProperty({ format: 'uuid', example: EVENT_ID, description: 'The `id` in the body sent' })
  event_id: string;

  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'succeeded' })
  status: DeliveryStatus;

  @ApiProperty({ example: 1, description: 'Attempts made so far' })
  attempt_count: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
    description: 'When the next attempt is due (pending deliveries only)',
  })
  next_attempt_at: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 200 })
  last_status_code: number | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  last_error: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T10:00:05.123Z' })
  created_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T10:00:05.201Z',
  })
  completed_at: string | null;

  @ApiProperty({
    enum: DELIVERY_REQUEUES,
    nullable: true,
    example: null,
    description:
      'What last queued it again: `redeliver`, `replay`, or `missed` (created by a replay for ' +
      'an event the webhook never received); null when it never was',
  })
  requeued_by: DeliveryRequeue | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  requeued_at: string | null;
}

export class DeliveryAttemptResponse {
  @ApiProperty({ example: 1, description: '1 for the first attempt, 2 for the first retry, …' })
  attempt: number;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T10:00:05.130Z' })
  started_at: string;

  @ApiProperty({ example: 71 })
  duration_ms: number;

  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'null: no answer' })
  status_code: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Why the attempt failed (HTTP status, timeout, connection error, URL policy)',
  })
  error: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'ok',
    description: `First ${RESPONSE_EXCERPT_BYTES} bytes of the receiver's answer`,
  })
  response_body: string | null;
}

export class DeliveryDetailResponse extends DeliveryResponse {
  @ApiProperty({
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
    ],
    description:
      'The body sent with every attempt (docs/api.md#notifications); for a webhook with a ' +
      'template, or a chat destination, what that made of it and sent (docs/templates.md): an ' +
      'object or an array',
    example: {
      id: EVENT_ID,
      event: 'job.started',
      created_at: '2026-01-01T10:00:05.123Z',
      data: { id: '85746065432', uuid: 'iJq5Qc1ZQe6m7Mvo2j3u5A==', topic: 'Weekly sync' },
      source: {
        platform: 'zoom',
        event: 'meeting.started',
        event_ts: 1767261605123,
        account_id: 'AbCdEf',
      },
    },
  })
  payload: Record<string, unknown>;

  @ApiProperty({ type: [DeliveryAttemptResponse] })
  attempts: DeliveryAttemptResponse[];
}

export class DeliveryListResponse {
  @ApiProperty({ type: [DeliveryResponse] })
  data: DeliveryResponse[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: null,
    description: 'Pass as `cursor` for the next page; null on the last page',
  })
  next_cursor: string | null;
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function toDeliveryResponse(d: DeliveryEntity): DeliveryResponse {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event: d.event,
    event_id: d.eventId,
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: iso(d.nextAttemptAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    completed_at: iso(d.completedAt),
    requeued_by: d.requeuedBy,
    requeued_at: iso(d.requeuedAt),
  };
}

/** `body` is what every attempt sends (the event's, or the delivery's own if it has one). */
export function toDeliveryDetailResponse(
  d: DeliveryEntity,
  body: string,
  attempts: DeliveryAttemptEntity[],
): DeliveryDetailResponse {
  return {
    ...toDeliveryResponse(d),
    payload: JSON.parse(body) as Record<string, unknown>,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt.toISOString(),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error: a.error,
      response_body: a.responseBody,
    })),
  };
}
