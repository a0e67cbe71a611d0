import { Module } from '@nestjs/common';
import { DispatcherModule } from '../../../dispatcher/publish/dispatcher.module';
import { InboundStoreModule } from '../../inbound-store.module';
import { InboundService } from '../../inbound.service';
import { WebhookController } from './webhook.controller';
import { WebhookReceiver } from './webhook-receiver';

/** POST /zoom/events: verify, answer URL validation, store and publish or queue (API role). */
@Module({
  imports: [InboundStoreModule, DispatcherModule],
  controllers: [WebhookController],
  providers: [InboundService, WebhookReceiver],
})
export class WebhookSourceModule {}
