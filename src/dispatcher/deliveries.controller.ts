import { Controller, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ApiErrorResponse } from '../common/error-response';
import { UuidParam } from '../common/uuid-param';
import { DeliveryLogService } from './delivery-log.service';
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
  constructor(private readonly log: DeliveryLogService) {}

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
  @ApiErrorResponse(409, {
    description: 'The webhook is inactive',
    example: {
      message: 'The webhook is inactive; activate it (PATCH active: true) to send a test',
    },
  })
  test(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<DeliveryResponse> {
    return this.log.sendTest(client.clientId, id);
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
