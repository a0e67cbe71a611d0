import { Subscription } from '../subscription-events';
import {
  WebhookEvents,
  WebhookMaxInFlight,
  WebhookOrderingField,
  WebhookRateLimit,
  WebhookSecret,
  WebhookUrl,
} from './webhook-fields';
import { WebhookOrdering } from '../webhook.entity';

/** Body of POST /api/webhooks. Any other field is refused. */
export class CreateWebhookDto {
  @WebhookUrl({ required: true })
  url: string;

  @WebhookEvents({ required: true })
  events: Subscription[];

  @WebhookSecret({ required: true })
  secret: string;

  @WebhookMaxInFlight({ required: false })
  max_in_flight?: number;

  @WebhookRateLimit({ required: false })
  rate_limit?: number | null;

  @WebhookOrderingField({ required: false })
  ordering?: WebhookOrdering;
}
