import { ApiProperty } from '@nestjs/swagger';
import type { CustomHeaders } from '../custom-headers';
import { destinationResponseSchema } from '../../destinations/destination-schema';
import type { Destination } from '../../destinations/registry';
import { Subscription } from '../subscription-events';
import { previousSecretExpiry } from '../secret-rotation';
import {
  WEBHOOK_DISABLED_REASONS,
  WEBHOOK_ORDERINGS,
  WebhookDisabledReason,
  WebhookEntity,
  WebhookOrdering,
} from '../webhook.entity';
import {
  ORDERING_DESCRIPTION,
  TEMPLATE_DESCRIPTION,
  WEBHOOK_EVENTS_SCHEMA,
  WEBHOOK_URL_EXAMPLE,
} from './webhook-fields';

/** A webhook as the API shows it: everything but the secret. */
export class WebhookResponse {
  @ApiProperty({ format: 'uuid', example: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' })
  id: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: WEBHOOK_URL_EXAMPLE,
    description:
      'The receiver of an http destination; for a chat destination (slack, teams, discord) its ' +
      'address masked, its host and last four characters (the address is a credential, never ' +
      'shown); null for a broker destination',
  })
  url: string | null;

  @ApiProperty({ ...WEBHOOK_EVENTS_SCHEMA, example: ['job.started', 'job.completed'] })
  events: Subscription[];

  @ApiProperty({ example: true })
  active: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T09:30:00.000Z' })
  updated_at: string;

  @ApiProperty({ description: 'Last 4 characters of the signing secret', example: 'a1b2' })
  secret_hint: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Until when the secret replaced by the last PATCH of `secret` still signs deliveries ' +
      'beside the current one (WEBHOOK_SECRET_GRACE_SECONDS); null when there is none or its ' +
      'time is over',
    example: '2026-01-02T09:30:00.000Z',
  })
  previous_secret_expires_at: string | null;

  @ApiProperty({
    enum: WEBHOOK_DISABLED_REASONS,
    nullable: true,
    example: null,
    description:
      'Why the service disabled it: `gone` (the receiver answered 410) or `failing` (its last ' +
      'WEBHOOK_DISABLE_AFTER_FAILURES deliveries failed); null while enabled or when its owner ' +
      'set `active: false`. `PATCH {"active": true}` enables it again.',
  })
  disabled_reason: WebhookDisabledReason | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, example: null })
  disabled_at: string | null;

  @ApiProperty(destinationResponseSchema())
  destination: Destination;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The filter as it was set; null when every event of its kinds is delivered',
    example: null,
  })
  filter: Record<string, unknown> | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'The custom headers, each value masked: `****` and its last 4 characters (a value ' +
      'shorter than 12 characters shows `****` alone); {} when none',
    example: { Authorization: '****6789' },
  })
  headers: CustomHeaders;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 100,
    description:
      'Most attempts in flight to it at once, across every worker process: its own, or the ' +
      'service default (DELIVERY_CONCURRENCY_PER_WEBHOOK) when never set',
    example: 10,
  })
  max_in_flight: number;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 10000,
    nullable: true,
    description: 'Most attempts started to it in any second; null for no rate limit',
    example: null,
  })
  rate_limit: number | null;

  @ApiProperty({ enum: WEBHOOK_ORDERINGS, description: ORDERING_DESCRIPTION, example: 'none' })
  ordering: WebhookOrdering;

  @ApiProperty({
    type: String,
    nullable: true,
    description: TEMPLATE_DESCRIPTION,
    example: null,
  })
  template: string | null;

  static from(webhook: WebhookEntity, now = new Date()): WebhookResponse {
    return {
      id: webhook.id,
      url: webhook.url,
      events: webhook.events,
      active: webhook.active,
      created_at: webhook.createdAt.toISOString(),
      updated_at: webhook.updatedAt.toISOString(),
      secret_hint: webhook.secretHint,
      previous_secret_expires_at: previousSecretExpiry(webhook, now)?.toISOString() ?? null,
      disabled_reason: webhook.disabledReason,
      disabled_at: webhook.disabledAt?.toISOString() ?? null,
      destination: webhook.destination,
      filter: webhook.filter,
      headers: webhook.headersMasked ?? {},
      // WebhooksService fills in the default of one never set.
      max_in_flight: webhook.maxInFlight!,
      rate_limit: webhook.rateLimit,
      ordering: webhook.ordering,
      template: webhook.template ?? null,
    };
  }
}

export class WebhookListResponse {
  @ApiProperty({ type: [WebhookResponse] })
  data: WebhookResponse[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last page',
    example:
      'WyIyMDI2LTAxLTAxVDA5OjMwOjAwLjAwMFoiLCI5YjFkZWI0ZC0zYjdkLTRiYWQtOWJkZC0yYjBkN2IzZGNiNmQiXQ',
  })
  next_cursor: string | null;
}
