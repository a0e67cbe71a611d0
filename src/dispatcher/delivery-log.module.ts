import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import { DeliveryLogService } from './delivery-log.service';
import { DeliveryEntity } from './delivery.entity';
import { DispatcherModule } from './dispatcher.module';

/** API role: POST /api/webhooks/:id/test and the delivery log. */
@Module({
  imports: [
    DispatcherModule,
    WebhooksModule,
    TypeOrmModule.forFeature([DeliveryEntity, DeliveryAttemptEntity]),
  ],
  controllers: [DeliveriesController],
  providers: [DeliveryLogService],
})
export class DeliveryLogModule {}
