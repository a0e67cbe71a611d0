import { SchemaRules } from '../../common/openapi-exact';
import { Subscription } from '../subscription-events';
import {
  WebhookActive,
  WebhookEvents,
  WebhookMaxInFlight,
  WebhookOrderingField,
  WebhookRateLimit,
  WebhookSecret,
  WebhookUrl,
} from './webhook-fields';
import { WebhookOrdering } from '../webhook.entity';

/** Body of PATCH /api/webhooks/:id: at least one of these; null is not a value. */
@SchemaRules({ minProperties: 1 })
export class UpdateWebhookDto {
  @WebhookUrl({ required: false })
  url?: string;

  @WebhookEvents({ required: false })
  events?: Subscription[];

  @WebhookSecret({ required: false })
  secret?: string;

  @WebhookActive({ required: false })
  active?: boolean;

  @WebhookMaxInFlight({ required: false })
  max_in_flight?: number;

  @WebhookRateLimit({ required: false })
  rate_limit?: number | null;

  @WebhookOrderingField({ required: false })
  ordering?: WebhookOrdering;
}
