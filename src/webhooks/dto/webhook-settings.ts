import { CustomHeaders } from '../custom-headers';
import { Destination } from '../../destinations/registry';
import { WebhookOrdering } from '../webhook.entity';
import {
  WebhookDestination,
  WebhookFilter,
  WebhookHeaders,
  WebhookMaxInFlight,
  WebhookOrderingField,
  WebhookRateLimit,
  WebhookTemplate,
} from './webhook-fields';

/**
 * The settings a webhook may be given when created and changed later: optional, and the same
 * on POST and PATCH, whose bodies add them after their own fields (IntersectionType keeps that
 * order in the document).
 */
export class WebhookSettings {
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

  @WebhookOrderingField({ required: false })
  ordering?: WebhookOrdering;

  @WebhookTemplate({ required: false })
  template?: string | null;
}
