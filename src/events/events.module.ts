import { Module } from '@nestjs/common';
import { EventLookupStore, PgEventLookupStore } from '../delivery-record/event-lookup.store';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** API role: the event lookup (GET /api/events, /api/events/:id). */
@Module({
  controllers: [EventsController],
  providers: [EventsService, { provide: EventLookupStore, useClass: PgEventLookupStore }],
})
export class EventsModule {}
