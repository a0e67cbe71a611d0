import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
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

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
