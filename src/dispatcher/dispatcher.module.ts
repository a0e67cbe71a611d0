import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { DeliveryEntity } from '../delivery-record/delivery.entity';
import { DispatcherService } from './dispatcher.service';
import { EventEntity } from '../delivery-record/event.entity';
import { EventStore, PgEventStore } from '../delivery-record/event.store';
import { LocalDeliveries } from './local-deliveries';

/**
 * publish() for every role: the API (test endpoint) and the workers that map platform events
 * both import this. No controllers and no processors here, so importing it adds neither.
 */
@Module({
  // Registers what publish writes (and what those entities refer to) in whichever role
  // imports this module.
  imports: [TypeOrmModule.forFeature([EventEntity, DeliveryEntity, WebhookEntity])],
  providers: [DispatcherService, { provide: EventStore, useClass: PgEventStore }, LocalDeliveries],
  exports: [DispatcherService, LocalDeliveries],
})
export class DispatcherModule {}
