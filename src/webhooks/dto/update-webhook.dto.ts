import { Subscription } from '../subscription-events';
import {
  WebhookActive,
  WebhookEvents,
  WebhookOrderingField,
  WebhookSecret,
  WebhookUrl,
} from './webhook-fields';
import { WebhookOrdering } from '../webhook.entity';

/** Body of PATCH /api/webhooks/:id: at least one of these; null is not a value. */
export class UpdateWebhookDto {
  @WebhookUrl({ required: false })
  url?: string;

  @WebhookEvents({ required: false })
  events?: Subscription[];

  @WebhookSecret({ required: false })
  secret?: string;

  @WebhookActive({ required: false })
  active?: boolean;

  @WebhookOrderingField({ required: false })
  ordering?: WebhookOrdering;
}
