import { IntersectionType } from '@nestjs/swagger';
import { SchemaRules } from '../../common/openapi-exact';
import { createBodyRule } from '../../destinations/destination-schema';
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

/** Body of POST /api/webhooks. Any other field is refused. */
// Which of url and destination a body needs, as the document's own rule (destination-schema.ts).
@SchemaRules(createBodyRule())
export class CreateWebhookDto extends IntersectionType(CreateWebhookFields, WebhookSettings) {}
