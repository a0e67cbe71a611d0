import { VIA } from '../../../common/inbound-via';
import type { InboundSource } from '../inbound-source';
import { WebhookSourceStatus } from './dto/webhook-status.response';
import { WebhookSourceModule } from './webhook-source.module';
import { WebhookStatus } from './webhook-status';

/** POST /zoom/events, signed by the platform (docs/inbound-sources.md). */
export const webhookSource: InboundSource<WebhookSourceStatus> = {
  via: VIA.webhook,
  api: [WebhookSourceModule],
  status: { reader: WebhookStatus, response: WebhookSourceStatus },
};
