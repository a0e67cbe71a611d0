import { IntersectionType } from '@nestjs/swagger';
import { SchemaRules } from '../../common/openapi-exact';
import { Subscription } from '../subscription-events';
import { WebhookCreateUrl, WebhookEvents, WebhookSecret } from './webhook-fields';
import { WebhookSettings } from './webhook-settings';

class CreateWebhookFields {
  /** Required for an http destination, refused for a broker one. */
  @WebhookCreateUrl()
  url?: string;

  @WebhookEvents({ required: true })
  events: Subscription[];

  @WebhookSecret({ required: true })
  secret: string;
}

const destinationOf = (types: string[]) => ({
  properties: { destination: { properties: { type: { enum: types } } } },
});

/** Body of POST /api/webhooks. Any other field is refused. */
// Which of url and destination a body needs, as the document's own rule: `url` with an http
// destination (the default), none with a broker one.
@SchemaRules({
  oneOf: [
    { required: ['url'], ...destinationOf(['http']) },
    {
      required: ['destination'],
      not: { required: ['url'] },
      ...destinationOf(['rabbitmq', 'nats']),
    },
  ],
})
export class CreateWebhookDto extends IntersectionType(CreateWebhookFields, WebhookSettings) {}
