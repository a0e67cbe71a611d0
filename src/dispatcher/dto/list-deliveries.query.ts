import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { Satisfies } from '../../common/field-rule';
import { PageCursor, PageLimit } from '../../common/page-query';
import {
  PLATFORM_EVENT_PATTERN,
  SUBSCRIPTION_EVENTS,
  TEST_EVENT,
  isPlatformEventKind,
} from '../../webhooks/subscription-events';
import { DELIVERY_STATUSES, DeliveryStatus } from '../delivery.entity';

const EVENT_KINDS: string[] = [...SUBSCRIPTION_EVENTS, TEST_EVENT];

export class ListDeliveriesQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this state' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({
    description: 'Only deliveries of this event kind (a platform event as `zoom.<event>`)',
    anyOf: [{ enum: EVENT_KINDS }, { pattern: PLATFORM_EVENT_PATTERN.source }],
    type: String,
  })
  @IsOptional()
  @Satisfies(
    (value, field) =>
      (typeof value === 'string' && EVENT_KINDS.includes(value)) || isPlatformEventKind(value)
        ? null
        : `${field} must be one of ${EVENT_KINDS.join(', ')} or zoom.<platform event>`,
    { optional: true },
  )
  event?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}
