import {
  Body,
  Controller,
  applyDecorators,
  Delete,
  Get,
  HttpCode,
  Patch,
  Post,
  Query,
  Req,
} from '@nestjs/common';
import type { RawBodyRequest } from '@nestjs/common';
import type { Request } from 'express';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ApiErrorResponse } from '../common/error-response';
import { UuidParam } from '../common/uuid-param';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { ListWebhooksQuery } from './dto/list-webhooks.query';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookListResponse, WebhookResponse } from './dto/webhook.response';
import { filterAsSent } from './event-filter';
import { ApiNotificationCallbacks } from './notification-callbacks';
import { OPERATIONAL_EVENTS } from './subscription-events';
import { WebhooksService } from './webhooks.service';

/** One bad field, as the validation answers it. */
const fieldError = (field: string, message: string) => ({
  message,
  details: [{ field, message }],
});

const badRequest = (description: string, field: string, message: string) =>
  ApiErrorResponse(400, { description, example: fieldError(field, message) });

/** The create and change bodies: the usual mistakes, one example each. */
const badBody = (description: string) =>
  ApiErrorResponse(400, {
    description,
    examples: {
      'unknown event': fieldError(
        'events',
        'events has unknown event kind(s) "job.exploded"; allowed: job.started, job.completed, ' +
          'follower.gained, follower.lost, operation.complete, operation.failed',
      ),
      'not a URL': fieldError('url', 'url must be an absolute http or https URL'),
      'private address': fieldError(
        'url',
        'url host 10.0.0.7 resolves to 10.0.0.7, a private or special-purpose address; such ' +
          'URLs are refused unless the service runs with WEBHOOK_ALLOW_PRIVATE_URLS=true ' +
          '(meant for local development)',
      ),
    },
  });
const BAD_FIELDS =
  'A field is missing, of the wrong type, unknown or invalid, or the URL points at a private ' +
  'address; `details` names each bad field';
const BAD_ID = badRequest('`id` is not a UUID', 'id', 'id must be a UUID');

/** The :id routes: the parameter, and 404 for an id that is not the caller's. */
const OWNED_WEBHOOK = applyDecorators(
  ApiParam({ name: 'id', format: 'uuid', example: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' }),
  ApiErrorResponse(404, {
    description: 'No webhook with this id belongs to the calling client',
    example: { message: 'Webhook not found' },
  }),
);

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
  // The service's own events, which a webhook receives only if it subscribes to them.
  @ApiNotificationCallbacks(...OPERATIONAL_EVENTS)
  @badBody(BAD_FIELDS)
  @ApiErrorResponse(409, {
    description: 'The client holds WEBHOOKS_PER_CLIENT webhooks already',
    example: {
      message: 'A client may hold at most 100 webhooks (WEBHOOKS_PER_CLIENT); delete one first',
    },
  })
  async create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateWebhookDto,
    @Req() req: RawBodyRequest<Request>,
  ): Promise<WebhookResponse> {
    body.filter = filterAsSent(req.rawBody, body.filter) as CreateWebhookDto['filter'];
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
  @ApiOperation({
    summary: 'Get one webhook',
    description: 'One webhook of the calling client; another client’s is 404, as a missing one.',
  })
  @OWNED_WEBHOOK
  @ApiOkResponse({ description: 'The webhook', type: WebhookResponse })
  @BAD_ID
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
  @OWNED_WEBHOOK
  @ApiOkResponse({ description: 'The webhook as changed', type: WebhookResponse })
  @badBody(`${BAD_FIELDS}, or \`id\` is not a UUID`)
  @ApiErrorResponse(409, {
    description:
      "The body does not fit the webhook's stored destination: a `url` for a broker " +
      'destination, or an http destination for a webhook without a url and none given',
    example: {
      message:
        "url must not be given for a nats destination (it names a broker instead): this webhook's destination is nats",
    },
  })
  async update(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
    @Body() body: UpdateWebhookDto,
    @Req() req: RawBodyRequest<Request>,
  ): Promise<WebhookResponse> {
    body.filter = filterAsSent(req.rawBody, body.filter) as UpdateWebhookDto['filter'];
    return WebhookResponse.from(await this.webhooks.update(client.clientId, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Delete a webhook',
    description: 'It receives nothing further; its delivery log is deleted with it.',
  })
  @OWNED_WEBHOOK
  @ApiNoContentResponse({ description: 'Deleted' })
  @BAD_ID
  async remove(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<void> {
    await this.webhooks.remove(client.clientId, id);
  }
}
