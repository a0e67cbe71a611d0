import { ApiProperty, ApiPropertyOptional, OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { toOpenApi30 } from '../../common/json-schema';
import { EVENT_TYPES } from '../../webhooks/event-catalog';
import { notificationSchemaName } from '../../webhooks/notification-callbacks';

/** The platform's webhook envelope (documentation only: the body is verified raw, then parsed). */
export class ZoomEventDto {
  @ApiProperty({ example: 'meeting.started', description: 'platform event name' })
  event: string;

  @ApiPropertyOptional({ example: 1735725605123, description: 'event time, ms since the epoch' })
  event_ts?: number;

  @ApiProperty({
    description:
      '`account_id` and `object`; for URL validation `plainToken` (an object then). Any other ' +
      'event is stored whatever its payload is (null, a string, an array: kept, counted ' +
      'unmappable and delivered to `zoom.*` as it came), numbers by their own text',
    example: { account_id: 'AAAAAAAAAAAAAAAAAAAAAA', object: { id: '85746065432' } },
  })
  payload: unknown;

  @ApiPropertyOptional({
    description:
      'recording events only; a credential: kept only encrypted (for the download links of ' +
      'an event-only deployment, until it expires), never forwarded',
  })
  download_token?: string;
}

export class UrlValidationAnswerDto {
  @ApiProperty({ example: 'qgg8vlvZRS6UYooatFL8Aw' })
  plainToken: string;

  @ApiProperty({
    example: '4efea922935c335d972476de138d2208a0d46ab28c79ee592d497a1b216419b8',
    description: 'hex HMAC-SHA256(secret token, plainToken)',
  })
  encryptedToken: string;
}

export class InboundAckDto {
  @ApiProperty({
    enum: ['accepted', 'duplicate'],
    example: 'accepted',
    description:
      '`duplicate`: an event with the same identity was already stored; not notified again',
  })
  status: 'accepted' | 'duplicate';
}

/**
 * The event catalog's schemas (GET /api/event-types) as Swagger components, each with an
 * example: the callbacks that a subscriber receives (docs/api.md#notifications) refer to them, so what
 * Swagger shows and what the API serves are one source.
 */
export function addNotificationSchemas(document: OpenAPIObject): void {
  const schemas = (document.components ??= {}).schemas ?? {};
  for (const type of EVENT_TYPES) {
    schemas[notificationSchemaName(type.name)] = {
      ...toOpenApi30(type.schema),
      example: type.example,
    } as SchemaObject;
  }
  document.components.schemas = schemas;
}
