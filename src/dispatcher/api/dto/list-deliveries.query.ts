import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { Satisfies } from '../../../common/field-rule';
import { PageCursor, PageLimit } from '../../../common/page-query';
import {
  COMPUTED_EVENTS,
  OPERATIONAL_EVENTS,
  PLATFORM_EVENT_PATTERN,
  SUBSCRIPTION_EVENTS,
  TEST_EVENT,
  isPlatformEventKind,
} from '../../../webhooks/subscription-events';
import { DELIVERY_STATUSES, DeliveryStatus } from '../../../delivery-record/delivery.entity';

const EVENT_KINDS: string[] = [
  ...SUBSCRIPTION_EVENTS,
  ...COMPUTED_EVENTS,
  ...OPERATIONAL_EVENTS,
  TEST_EVENT,
];

/** An `event` filter: a kind deliveries can have (a platform event as `zoom.<event>`). */
export const EventKindFilter = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      description: 'Only this event kind (a platform event as `zoom.<event>`)',
      anyOf: [{ enum: EVENT_KINDS }, { pattern: PLATFORM_EVENT_PATTERN.source }],
      type: String,
    }),
    IsOptional(),
    Satisfies(
      (value, field) =>
        (typeof value === 'string' && EVENT_KINDS.includes(value)) || isPlatformEventKind(value)
          ? null
          : `${field} must be one of ${EVENT_KINDS.join(', ')} or zoom.<platform event>`,
      { optional: true },
    ),
  );

export class ListDeliveriesQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this state' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @EventKindFilter()
  event?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}
