import { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SUBSCRIPTION_EVENTS, SubscriptionEvent } from '../../webhooks/subscription-events';
import { notificationExample } from './zoom-event.examples';

/** The platform's webhook envelope (documentation only: the body is verified raw, then parsed). */
export class ZoomEventDto {
  @ApiProperty({ example: 'meeting.started', description: 'platform event name' })
  event: string;

  @ApiPropertyOptional({ example: 1735725605123, description: 'event time, ms since the epoch' })
  event_ts?: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: '`account_id` and `object`; for URL validation `plainToken`',
    example: { account_id: 'AAAAAAAAAAAAAAAAAAAAAA', object: { id: '85746065432' } },
  })
  payload: Record<string, unknown>;

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

export class NotificationSourceDto {
  @ApiProperty({ enum: ['zoom'], example: 'zoom' })
  platform: 'zoom';
  @ApiProperty({ example: 'meeting.started' })
  event: string;
  @ApiProperty({ example: 1735725605123 })
  event_ts: number;
  @ApiProperty({ example: 'AAAAAAAAAAAAAAAAAAAAAA' })
  account_id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
    description: "the platform's x-zm-trackingid of the request (null when absent)",
  })
  tracking_id: string | null;
}

const pascal = (kind: string) =>
  kind
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/**
 * One documented model per subscription event kind, each with its own example: Swagger shows
 * them as the callbacks that a subscriber receives (SPEC §4).
 */
function notificationModel(kind: SubscriptionEvent): Type {
  const example = notificationExample(kind);
  const model = class {};
  Object.defineProperty(model, 'name', { value: `${pascal(kind)}Notification` });
  const property = (name: string, options: Parameters<typeof ApiProperty>[0]) =>
    ApiProperty(options)(model.prototype, name);
  property('id', { type: String, format: 'uuid', example: example.id, description: 'event id' });
  property('event', { type: String, enum: [kind], example: kind });
  property('created_at', { type: String, format: 'date-time', example: example.created_at });
  property('data', { type: 'object', additionalProperties: true, example: example.data });
  property('source', { type: NotificationSourceDto, nullable: true, example: example.source });
  return model;
}

export const NOTIFICATION_MODELS: Record<SubscriptionEvent, Type> = Object.fromEntries(
  SUBSCRIPTION_EVENTS.map((kind) => [kind, notificationModel(kind)]),
) as Record<SubscriptionEvent, Type>;
