import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventTypesController } from './event-types.controller';
import { WebhookEntity } from './webhook.entity';
import { PgWebhookStore, WebhookStore } from './webhook.store';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * /api/webhooks: the subscriptions. Exports the service (findOwned) for the dispatcher, which
 * owns the test and delivery-log routes under the same path.
 */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookEntity])],
  controllers: [WebhooksController, EventTypesController],
  providers: [WebhooksService, { provide: WebhookStore, useClass: PgWebhookStore }],
  exports: [WebhooksService],
})
export class WebhooksModule {}
