import { Body, Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthenticatedClient } from '../../auth/auth.types';
import { CurrentClient, RequireScopes } from '../../auth/scopes.decorator';
import { ApiErrorResponse } from '../../common/error-response';
import { UuidParam } from '../../common/uuid-param';
import { ApiNotificationCallbacks } from '../../webhooks/notification-callbacks';
import { TEST_EVENT } from '../../webhooks/subscription-events';
import { DeliveryControlService } from './delivery-control.service';
import { DeliveryLogService } from './delivery-log.service';
import { ReplayDto, ReplayResponse } from './dto/replay.dto';
import {
  DeliveryDetailResponse,
  DeliveryResponse,
  DeliveryListResponse,
} from './dto/delivery.response';
import { ListDeliveriesQuery } from './dto/list-deliveries.query';

/** Lives in the dispatcher, not in webhooks: the webhooks module never depends on delivery. */
@ApiTags('webhooks')
@ApiParam({ name: 'id', format: 'uuid', description: 'The webhook' })
@ApiErrorResponse(400, {
  description: 'A path or query parameter is malformed; `details` names it',
  examples: {
    id: { message: 'id must be a UUID', details: [{ field: 'id', message: 'id must be a UUID' }] },
    limit: {
      message: 'limit must be an integer from 1 to 100',
      details: [{ field: 'limit', message: 'limit must be an integer from 1 to 100' }],
    },
  },
})
@ApiErrorResponse(404, {
  description: 'No webhook with this id belongs to the calling client (or no such delivery of it)',
  example: { message: 'Webhook not found' },
})
@Controller('api/webhooks/:id')
export class DeliveriesController {
  constructor(
    private readonly log: DeliveryLogService,
    private readonly control: DeliveryControlService,
  ) {}

  @Post('test')
  @HttpCode(HttpStatus.ACCEPTED)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send a test notification',
    description:
      'Queues a `webhook.test` event to this webhook only, whatever it subscribes to, signed and ' +
      'retried like any other delivery. Follow it in the delivery log.',
  })
  @ApiAcceptedResponse({ type: DeliveryResponse, description: 'The delivery it queued' })
  @ApiNotificationCallbacks(TEST_EVENT)
  @ApiErrorResponse(409, {
    description: 'The webhook is inactive',
    example: {
      message: 'The webhook is inactive; activate it (PATCH active: true) to send a test',
    },
  })
  @ApiErrorResponse(429, {
    description:
      'Ten tests were sent to this webhook in the last 60 s; `Retry-After` says in how many ' +
      'seconds a slot frees',
    example: { message: 'At most 10 tests per webhook in 60 s; try again in 14 s' },
  })
  test(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<DeliveryResponse> {
    return this.log.sendTest(client.clientId, id);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send a delivery again',
    description:
      'Puts a `failed` or `succeeded` delivery back to `pending` with a fresh series: one ' +
      'attempt now plus up to DELIVERY_MAX_RETRIES retries. Its attempts go on counting ' +
      '(`x-service-attempt`), and it keeps its id (`x-service-delivery`) and its body.',
  })
  @ApiParam({ name: 'deliveryId', format: 'uuid' })
  @ApiAcceptedResponse({ type: DeliveryResponse, description: 'The delivery, pending again' })
  @ApiErrorResponse(409, {
    description: 'The delivery is still pending, or the webhook is inactive',
    example: { message: 'The delivery is pending: its attempts are still under way' },
  })
  redeliver(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @UuidParam('deliveryId') deliveryId: string,
  ): Promise<DeliveryResponse> {
    return this.control.redeliver(client.clientId, id, deliveryId);
  }

  @Post('replay')
  @HttpCode(HttpStatus.ACCEPTED)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send the deliveries of a time window again (recover after an outage)',
    description:
      'Re-queues every delivery of this webhook created in [`since`, `until`) with `status` ' +
      '(default `failed`), each with a fresh series and its own delivery id, so receivers ' +
      'de-duplicate. With `missed: true` it also creates deliveries for the events of its ' +
      'kinds published in the window after it was created that it never received (it was ' +
      'inactive or disabled then), each once.',
  })
  @ApiAcceptedResponse({ type: ReplayResponse, description: 'How many deliveries it queued' })
  @ApiErrorResponse(409, {
    description: 'The webhook is inactive',
    example: { message: 'The webhook is inactive; enable it (PATCH active: true) to replay' },
  })
  replay(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @Body() body: ReplayDto,
  ): Promise<ReplayResponse> {
    return this.control.replay(client.clientId, id, body);
  }

  @Get('deliveries')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'List deliveries (delivery log)',
    description: 'Newest first, filtered by `status` and `event`, paged with `limit` and `cursor`.',
  })
  @ApiOkResponse({ type: DeliveryListResponse })
  list(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @Query() query: ListDeliveriesQuery,
  ): Promise<DeliveryListResponse> {
    return this.log.list(client.clientId, id, query);
  }

  @Get('deliveries/:deliveryId')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'Get one delivery with its payload and attempts',
    description: 'Each attempt keeps the first 1 KiB of the response body.',
  })
  @ApiParam({ name: 'deliveryId', format: 'uuid' })
  @ApiOkResponse({ type: DeliveryDetailResponse })
  get(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @UuidParam('deliveryId') deliveryId: string,
  ): Promise<DeliveryDetailResponse> {
    return this.log.get(client.clientId, id, deliveryId);
  }
}
