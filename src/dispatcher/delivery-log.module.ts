import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveryAttemptEntity } from '../delivery-record/delivery-attempt.entity';
import { DeliveryControlService } from './delivery-control.service';
import { DeliveryControlStore, PgDeliveryControlStore } from '../delivery-record/delivery-control.store';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryEntity } from '../delivery-record/delivery.entity';
import { DispatcherModule } from './dispatcher.module';
import { EventEntity } from '../delivery-record/event.entity';

/** API role: POST /api/webhooks/:id/test, redelivery and replay, and the delivery log. */
@Module({
  imports: [
    DispatcherModule,
    WebhooksModule,
    // EventEntity: DeliveryEntity's relation needs its metadata (entities are auto-loaded).
    TypeOrmModule.forFeature([DeliveryEntity, DeliveryAttemptEntity, EventEntity]),
  ],
  controllers: [DeliveriesController],
  providers: [
    DeliveryLogService,
    DeliveryControlService,
    { provide: DeliveryControlStore, useClass: PgDeliveryControlStore },
  ],
})
export class DeliveryLogModule {}
