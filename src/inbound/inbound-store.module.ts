import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InboundEventEntity } from './inbound-event.entity';
import { InboundEventStore, PgInboundEventStore } from './inbound-event.store';

/** inbound_events access, shared by the endpoint, the inbound worker and the recording automation. */
@Module({
  imports: [TypeOrmModule.forFeature([InboundEventEntity])],
  providers: [{ provide: InboundEventStore, useClass: PgInboundEventStore }],
  exports: [InboundEventStore],
})
export class InboundStoreModule {}
