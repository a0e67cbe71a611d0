import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ApiErrorResponse } from '../common/error-response';
import { ApiUuidRefused, UuidParam } from '../common/uuid-param';
import { EventDetailResponse, EventListResponse } from './dto/event.response';
import { ListEventsQuery } from './dto/list-events.query';
import { EventsService } from './events.service';

/** GET /api/events and /api/events/:id (docs/operations.md): where did the platform's event go? */
@ApiTags('events')
@Controller('api/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'Find events (by platform tracking id, kind, time)',
    description:
      "The calling client's events, those with a delivery to one of its webhooks, newest " +
      "first: filter by the platform's `x-zm-trackingid` (`tracking_id`), the kind (`event`) " +
      'and the time published (`since` included, `until` excluded); paged with `limit` and ' +
      '`cursor`.',
  })
  @ApiOkResponse({ type: EventListResponse })
  @ApiErrorResponse(400, {
    description: 'A query parameter is malformed; `details` names it',
    examples: {
      since: {
        message: 'since must be an ISO 8601 UTC timestamp such as 2026-01-01T09:30:00Z',
        details: [
          {
            field: 'since',
            message: 'since must be an ISO 8601 UTC timestamp such as 2026-01-01T09:30:00Z',
          },
        ],
      },
      cursor: {
        message: 'cursor is not a valid page cursor',
        details: [{ field: 'cursor', message: 'cursor is not a valid page cursor' }],
      },
    },
  })
  list(
    @CurrentClient() client: AuthenticatedClient,
    @Query() query: ListEventsQuery,
  ): Promise<EventListResponse> {
    return this.events.list(client.clientId, query);
  }

  @Get(':id')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'Get one event with its deliveries to your webhooks',
    description:
      "The event and its deliveries to the calling client's webhooks (each delivery's " +
      'attempts are in the delivery log). 404 when none of its deliveries went to them.',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The event (`id` of the body sent)' })
  @ApiOkResponse({ type: EventDetailResponse })
  @ApiUuidRefused()
  @ApiErrorResponse(404, {
    description: "No event with this id reached the calling client's webhooks",
    example: { message: 'Event not found' },
  })
  get(
    @CurrentClient() client: AuthenticatedClient,
    @UuidParam('id') id: string,
  ): Promise<EventDetailResponse> {
    return this.events.get(client.clientId, id);
  }
}
