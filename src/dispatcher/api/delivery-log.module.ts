import { Module } from '@nestjs/common';
import { WebhooksModule } from '../../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveryControlService } from './delivery-control.service';
import { DeliveryLogService } from './delivery-log.service';
import { DispatcherModule } from '../publish/dispatcher.module';

/** API role: POST /api/webhooks/:id/test, redelivery and replay, and the delivery log. */
@Module({
  imports: [DispatcherModule, WebhooksModule],
  controllers: [DeliveriesController],
  providers: [DeliveryLogService, DeliveryControlService],
})
export class DeliveryLogModule {}
