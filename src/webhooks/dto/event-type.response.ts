import { ApiProperty } from '@nestjs/swagger';
import { JsonSchema } from '../../common/json-schema';
import { EVENT_TYPES } from '../event-catalog';

const EXAMPLE = EVENT_TYPES[0];

/** One entry of the event catalog (docs/receiving.md). */
export class EventTypeResponse {
  @ApiProperty({
    description:
      'A subscription event kind, `webhook.test`, or `zoom.*` for the platform events as they are',
    example: EXAMPLE.name,
  })
  name: string;

  @ApiProperty({ example: EXAMPLE.description })
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'JSON Schema (draft 2020-12) of the notification body; every body delivered of this ' +
      'kind validates against it',
    example: EXAMPLE.schema,
  })
  schema: JsonSchema;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'An example notification body of this kind: what POST /api/templates/render tries a ' +
      'template on when given no body',
    example: EXAMPLE.example,
  })
  example: Record<string, unknown>;
}

export class EventTypeListResponse {
  @ApiProperty({ type: [EventTypeResponse] })
  data: EventTypeResponse[];
}
