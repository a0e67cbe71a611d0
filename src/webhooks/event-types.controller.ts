import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../auth/scopes.decorator';
import { EventTypeListResponse } from './dto/event-type.response';
import { EVENT_TYPES } from './event-catalog';

const CATALOG: EventTypeListResponse = { data: [...EVENT_TYPES] };

@ApiTags('webhooks')
@Controller('api/event-types')
export class EventTypesController {
  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: 'The event catalog: every kind a webhook receives, with its body schema',
    description:
      'The six subscription kinds, `webhook.test` and the `zoom.*` family of platform events as ' +
      'they are, each with a description and the JSON Schema (draft 2020-12) of its ' +
      'notification body. The same schemas are the callbacks of `POST /zoom/events` here.',
  })
  @ApiOkResponse({ description: 'The catalog', type: EventTypeListResponse })
  list(): EventTypeListResponse {
    return CATALOG;
  }
}
