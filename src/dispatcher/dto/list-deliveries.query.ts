import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageCursor, PageLimit } from '../../common/page-query';
import { SUBSCRIPTION_EVENTS, TEST_EVENT } from '../../webhooks/subscription-events';
import { DELIVERY_STATUSES, DeliveryStatus } from '../delivery.entity';

const EVENT_KINDS = [...SUBSCRIPTION_EVENTS, TEST_EVENT];

export class ListDeliveriesQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES, description: 'Only deliveries in this state' })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ enum: EVENT_KINDS, description: 'Only deliveries of this event kind' })
  @IsOptional()
  @IsIn(EVENT_KINDS, { message: `event must be one of ${EVENT_KINDS.join(', ')}` })
  event?: string;

  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}
