import { IntersectionType } from '@nestjs/swagger';
import { SchemaRules } from '../../common/openapi-exact';
import { DESTINATIONS } from '../../destinations/registry';
import { Subscription } from '../subscription-events';
import { WebhookActive, WebhookEvents, WebhookSecret, WebhookUrl } from './webhook-fields';
import { WebhookSettings } from './webhook-settings';

class UpdateWebhookFields {
  @WebhookUrl({ required: false })
  url?: string;

  @WebhookEvents({ required: false })
  events?: Subscription[];

  @WebhookSecret({ required: false })
  secret?: string;

  @WebhookActive({ required: false })
  active?: boolean;
}

/**
 * Body of PATCH /api/webhooks/:id: at least one of these; null is a value of filter and headers
 * only; a `url` never beside a broker `destination`. (A url for a webhook whose stored
 * destination is a broker is a 409: the body alone is fine.)
 */
@SchemaRules({
  minProperties: 1,
  not: {
    required: ['url', 'destination'],
    properties: { destination: { properties: { type: { enum: DESTINATIONS.brokerTypes } } } },
  },
})
export class UpdateWebhookDto extends IntersectionType(UpdateWebhookFields, WebhookSettings) {}
