import { SchemaRules } from '../../common/openapi-exact';
import { CustomHeaders } from '../custom-headers';
import { Destination } from '../destination';
import { Subscription } from '../subscription-events';
import {
  WebhookActive,
  WebhookDestination,
  WebhookEvents,
  WebhookFilter,
  WebhookHeaders,
  WebhookMaxInFlight,
  WebhookRateLimit,
  WebhookSecret,
  WebhookUrl,
} from './webhook-fields';

/** Body of PATCH /api/webhooks/:id: at least one of these; null is a value of filter and headers only. */
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
