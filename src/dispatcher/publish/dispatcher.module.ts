import { Module } from '@nestjs/common';
import { DispatcherService } from './dispatcher.service';
import { DeliveryRecordModule } from '../../delivery-record/delivery-record.module';
import { LocalDeliveries } from './local-deliveries';

/**
 * publish() for every role: the API (test endpoint) and the workers that map platform events
 * both import this. No controllers and no processors here, so importing it adds neither.
 */
@Module({
  imports: [DeliveryRecordModule],
  providers: [DispatcherService, LocalDeliveries],
  exports: [DispatcherService, LocalDeliveries, DeliveryRecordModule],
})
export class DispatcherModule {}
