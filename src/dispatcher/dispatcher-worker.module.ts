import { Module } from '@nestjs/common';
import { SecretCipher } from '../webhooks/secret-cipher';
import { DeliveriesProcessor } from './deliveries.processor';
import { DeliveriesSweeper } from './deliveries.sweeper';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverySender, HttpDeliverySender } from './delivery-sender.service';
import { DeliveryStore, PgDeliveryStore } from './delivery.store';

/**
 * Worker role: the deliveries processor and the sweeper. SecretCipher is provided here rather
 * than imported with WebhooksModule, which would bring the /api/webhooks routes into workers.
 */
@Module({
  providers: [
    DeliveriesProcessor,
    DeliveriesSweeper,
    DeliveryAttemptService,
    { provide: DeliverySender, useClass: HttpDeliverySender },
    { provide: DeliveryStore, useClass: PgDeliveryStore },
    SecretCipher,
  ],
})
export class DispatcherWorkerModule {}
