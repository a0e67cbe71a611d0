import { Module } from '@nestjs/common';
import { SecretCipher } from '../webhooks/secret-cipher';
import { DeliveriesProcessor } from './deliveries.processor';
import { DeliveriesSweeper } from './deliveries.sweeper';
import { DeliverySender } from './delivery-sender.service';
import { DeliveryStore } from './delivery-store.service';

/**
 * Worker role: the deliveries processor and the sweeper. SecretCipher is provided here rather
 * than imported with WebhooksModule, which would bring the /api/webhooks routes into workers.
 */
@Module({
  providers: [DeliveriesProcessor, DeliveriesSweeper, DeliverySender, DeliveryStore, SecretCipher],
})
export class DispatcherWorkerModule {}
