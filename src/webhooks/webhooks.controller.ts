import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ErrorResponse } from '../common/error-response';
import { UuidParam } from '../common/uuid-param';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { ListWebhooksQuery } from './dto/list-webhooks.query';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookListResponse, WebhookResponse } from './dto/webhook.response';
import { WebhooksService } from './webhooks.service';

const badRequest = (description: string, field: string, message: string) =>
  ApiBadRequestResponse({
    description,
    type: ErrorResponse,
    example: { statusCode: 400, error: 'Bad Request', message, details: [{ field, message }] },
  });

const BAD_BODY = badRequest(
  'A field is missing, of the wrong type, unknown or invalid, or the URL points at a private ' +
    'address; `details` names each bad field',
  'events',
  'events has unknown event kind(s) "job.exploded"; allowed: job.started, job.completed, ' +
    'follower.gained, follower.lost, operation.complete, operation.failed',
);
const BAD_ID = badRequest('`id` is not a UUID', 'id', 'id must be a UUID');
const NOT_FOUND = ApiNotFoundResponse({
  description: 'No webhook with this id belongs to the calling client',
  type: ErrorResponse,
  example: { statusCode: 404, error: 'Not Found', message: 'Webhook not found' },
});
const ID = ApiParam({
  name: 'id',
  format: 'uuid',
  example: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
});

@ApiTags('webhooks')
@Controller('api/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Subscribe a URL to event kinds',
    description:
      'Creates an active webhook owned by the calling client. The secret signs every ' +
      'notification (`x-service-signature`) and is never returned.',
  })
  @ApiCreatedResponse({ description: 'The new webhook', type: WebhookResponse })
  @BAD_BODY
  async create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateWebhookDto,
  ): Promise<WebhookResponse> {
    return WebhookResponse.from(await this.webhooks.create(client.clientId, body));
  }

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: "List the calling client's webhooks, newest first",
    description: 'Cursor pagination: pass `next_cursor` as `cursor` until it is null.',
  })
  @ApiOkResponse({ description: 'One page of webhooks', type: WebhookListResponse })
  @badRequest('Bad `limit` or `cursor`', 'limit', 'limit must be an integer from 1 to 100')
  list(
    @CurrentClient() client: AuthenticatedClient,
    @Query() query: ListWebhooksQuery,
  ): Promise<WebhookListResponse> {
    return this.webhooks.list(client.clientId, query);
  }

  @Get(':id')
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: 'Get one webhook' })
  @ID
  @ApiOkResponse({ description: 'The webhook', type: WebhookResponse })
  @BAD_ID
  @NOT_FOUND
  async get(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<WebhookResponse> {
    return WebhookResponse.from(await this.webhooks.findOwned(client.clientId, id));
  }

  @Patch(':id')
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Change a webhook',
    description:
      'Any of `url`, `events`, `secret`, `active` (at least one); the others keep their ' +
      'values. `active: false` stops deliveries until set back to true.',
  })
  @ID
  @ApiOkResponse({ description: 'The webhook as changed', type: WebhookResponse })
  @BAD_BODY
  @NOT_FOUND
  async update(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @Body() body: UpdateWebhookDto,
  ): Promise<WebhookResponse> {
    return WebhookResponse.from(await this.webhooks.update(client.clientId, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Delete a webhook',
    description: 'It receives nothing further; its delivery log is deleted with it.',
  })
  @ID
  @ApiNoContentResponse({ description: 'Deleted' })
  @BAD_ID
  @NOT_FOUND
  async remove(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<void> {
    await this.webhooks.remove(client.clientId, id);
  }
}
