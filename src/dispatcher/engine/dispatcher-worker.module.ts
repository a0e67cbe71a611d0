import { Module } from '@nestjs/common';
import { DeliveriesProcessor } from './deliveries.processor';
import { DeliveriesSweeper } from './deliveries.sweeper';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverySenderService } from './delivery-sender.service';
import { DestinationsModule } from '../../destinations/destinations.module';
import { OperationalEventsService } from '../operational-events/operational-events.service';
import { DispatcherModule } from '../publish/dispatcher.module';
import { ReceiverHealthService } from './receiver-health.service';
import { RedisWebhookSlots, WebhookSlots } from './webhook-slots';
import { ShapingModule } from '../../shaping/shaping.module';

/**
 * Worker role: the deliveries processor and the sweeper (the cipher comes from the global
 * SecretCipherModule).
 */
@Module({
  // LocalDeliveries: the processor takes this process's own publishes from it; the record's
  // stores come with DispatcherModule (DeliveryRecordModule).
  imports: [DispatcherModule, DestinationsModule, ShapingModule],
  providers: [
    DeliveriesProcessor,
    DeliveriesSweeper,
    DeliveryAttemptService,
    DeliverySenderService,
    ReceiverHealthService,
    { provide: WebhookSlots, useClass: RedisWebhookSlots },
    OperationalEventsService,
  ],
})
export class DispatcherWorkerModule {}
