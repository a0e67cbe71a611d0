import { Module } from '@nestjs/common';
import { DeliveriesProcessor } from './deliveries.processor';
import { DeliveriesSweeper } from './deliveries.sweeper';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverySenderService } from './delivery-sender.service';
import { DeliveryStore, PgDeliveryStore } from './delivery.store';
import { DestinationsModule } from '../destinations/destinations.module';
import { DeliveryOrderStore, PgDeliveryOrderStore } from './delivery-order.store';
import { OperationalEventsService } from './operational-events.service';
import { OperationalEventStore, PgOperationalEventStore } from './operational-events.store';
import { DispatcherModule } from './dispatcher.module';
import { ReceiverHealthService } from './receiver-health.service';
import { PgReceiverHealthStore, ReceiverHealthStore } from './receiver-health.store';
import { RedisWebhookSlots, WebhookSlots } from './webhook-slots';

/**
 * Worker role: the deliveries processor and the sweeper (the cipher comes from the global
 * SecretCipherModule).
 */
@Module({
  // LocalDeliveries: the processor takes this process's own publishes from it.
  imports: [DispatcherModule, DestinationsModule],
  providers: [
    DeliveriesProcessor,
    DeliveriesSweeper,
    DeliveryAttemptService,
    DeliverySenderService,
    { provide: DeliveryStore, useClass: PgDeliveryStore },
    { provide: DeliveryOrderStore, useClass: PgDeliveryOrderStore },
    ReceiverHealthService,
    { provide: ReceiverHealthStore, useClass: PgReceiverHealthStore },
    { provide: WebhookSlots, useClass: RedisWebhookSlots },
    OperationalEventsService,
    { provide: OperationalEventStore, useClass: PgOperationalEventStore },
  ],
})
export class DispatcherWorkerModule {}
