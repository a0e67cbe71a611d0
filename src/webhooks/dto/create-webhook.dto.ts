import { Subscription } from '../subscription-events';
import { WebhookEvents, WebhookOrderingField, WebhookSecret, WebhookUrl } from './webhook-fields';
import { WebhookOrdering } from '../webhook.entity';

/** Body of POST /api/webhooks. Any other field is refused. */
export class CreateWebhookDto {
  @WebhookUrl({ required: true })
  url: string;

  @WebhookEvents({ required: true })
  events: Subscription[];

  @WebhookSecret({ required: true })
  secret: string;

  @WebhookOrderingField({ required: false })
  ordering?: WebhookOrdering;
}
