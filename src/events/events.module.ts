import { Module } from '@nestjs/common';
import { DeliveryRecordModule } from '../delivery-record/delivery-record.module';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** API role: the event lookup (GET /api/events, /api/events/:id). */
@Module({
  imports: [DeliveryRecordModule],
  controllers: [EventsController],
  providers: [EventsService],
})
export class EventsModule {}
