import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InboundEventEntity } from './inbound-event.entity';
import { InboundGapEntity } from './inbound-gap.entity';
import { InboundEventStore, PgInboundEventStore } from './inbound-event.store';

/** inbound_events access, shared by the endpoint, the inbound worker and the recording automation. */
@Module({
  imports: [TypeOrmModule.forFeature([InboundEventEntity, InboundGapEntity])],
  providers: [{ provide: InboundEventStore, useClass: PgInboundEventStore }],
  exports: [InboundEventStore],
})
export class InboundStoreModule {}
