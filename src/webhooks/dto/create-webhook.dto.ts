import { CustomHeaders } from '../custom-headers';
import { Destination } from '../destination';
import { Subscription } from '../subscription-events';
import {
  WebhookCreateUrl,
  WebhookDestination,
  WebhookEvents,
  WebhookFilter,
  WebhookHeaders,
  WebhookMaxInFlight,
  WebhookRateLimit,
  WebhookSecret,
} from './webhook-fields';

/** Body of POST /api/webhooks. Any other field is refused. */
export class CreateWebhookDto {
  /** Required for an http destination, refused for a broker one. */
  @WebhookCreateUrl()
  url?: string;

  @WebhookEvents({ required: true })
  events: Subscription[];

  @WebhookSecret({ required: true })
  secret: string;

  @WebhookDestination({ required: false })
  destination?: Destination;

  @WebhookFilter({ required: false })
  filter?: Record<string, unknown> | null;

  @WebhookHeaders({ required: false })
  headers?: CustomHeaders | null;

  @WebhookMaxInFlight({ required: false })
  max_in_flight?: number;

  @WebhookRateLimit({ required: false })
  rate_limit?: number | null;
}
