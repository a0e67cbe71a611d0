import { ApiProperty } from '@nestjs/swagger';
import { NextCursor } from '../../common/page-query';
import { DELIVERY_STATUSES, DeliveryStatus } from '../../delivery-record/delivery.entity';
import type { LookedUpDelivery, LookedUpEvent } from '../../delivery-record/event-lookup.store';
import { VIA } from '../../common/inbound-via';

const EVENT_ID = 'c3b1e2d4-5f60-4a7b-8c9d-0e1f2a3b4c5d';

/** An event as its notifications carry it (docs/api.md#notifications body, without the delivery's own headers). */
export class EventResponse {
  @ApiProperty({ format: 'uuid', example: EVENT_ID, description: 'The `id` of every body sent' })
  id: string;

  @ApiProperty({ example: 'job.started', description: 'The event kind' })
  event: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T10:00:05.123Z' })
  created_at: string;

  @ApiProperty({
    oneOf: [
      { type: 'object', additionalProperties: true, nullable: true },
      { type: 'array', items: {} },
      { type: 'string' },
    ],
    description:
      "The notification's `data` as its deliveries sent it (numbers by their own text), as its " +
      "kind's schema in GET /api/event-types says: an object, except for a platform event as it " +
      'came (`zoom.*`) whose `payload` was not one (null, a string, an array)',
    example: { id: '85746065432', uuid: 'iJq5Qc1ZQe6m7Mvo2j3u5A==', topic: 'Weekly sync' },
  })
  data: unknown;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description:
      'The platform event that caused it (`tracking_id` is its x-zm-trackingid, `via` how the ' +
      'service learned of it: webhook, websocket or reconciliation); null for ' +
      "tests and the service's own operational events",
    example: {
      platform: 'zoom',
      event: 'meeting.started',
      event_ts: 1767261605123,
      account_id: 'AbCdEf',
      tracking_id: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
      via: VIA.webhook,
    },
  })
  source: Record<string, unknown> | null;
}

/** One delivery of the event to one of the caller's webhooks. */
export class EventDeliveryResponse {
  @ApiProperty({ format: 'uuid', example: '7d6f0c64-58b1-4a5e-9c1e-3f7f6b1f2a10' })
  id: string;

  @ApiProperty({ format: 'uuid', example: '0b5e5a8e-3c1d-4f47-8d0a-6a3c2f4b9e11' })
  webhook_id: string;

  @ApiProperty({ enum: DELIVERY_STATUSES, example: 'succeeded' })
  status: DeliveryStatus;

  @ApiProperty({ example: 2, description: 'Attempts made so far' })
  attempt_count: number;

  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'null: no answer' })
  last_status_code: number | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T10:00:05.201Z',
    description: 'When it ended; null while pending',
  })
  completed_at: string | null;
}

export class EventDetailResponse extends EventResponse {
  @ApiProperty({
    type: [EventDeliveryResponse],
    description:
      "Its deliveries to the caller's own webhooks (those of other clients are never shown); " +
      'the attempts of each are in GET /api/webhooks/{webhook_id}/deliveries/{id}',
  })
  deliveries: EventDeliveryResponse[];
}

export class EventListResponse {
  @ApiProperty({ type: [EventResponse] })
  data: EventResponse[];

  @NextCursor()
  next_cursor: string | null;
}

export function toEventResponse(e: LookedUpEvent): EventResponse {
  return {
    id: e.id,
    event: e.kind,
    created_at: e.createdAt.toISOString(),
    data: e.data,
    source: e.source,
  };
}

export function toEventDetailResponse(
  e: LookedUpEvent,
  deliveries: LookedUpDelivery[],
): EventDetailResponse {
  return {
    ...toEventResponse(e),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      webhook_id: d.webhookId,
      status: d.status,
      attempt_count: d.attemptCount,
      last_status_code: d.lastStatusCode,
      completed_at: d.completedAt ? d.completedAt.toISOString() : null,
    })),
  };
}
