import { Module } from '@nestjs/common';
import { DispatcherModule } from '../dispatcher/publish/dispatcher.module';
import { InboundStoreModule } from './inbound-store.module';
import { InboundController } from './inbound.controller';
import { InboundService } from './inbound.service';

/** POST /zoom/events: verify, answer URL validation, store and publish or queue (API role). */
@Module({
  imports: [InboundStoreModule, DispatcherModule],
  controllers: [InboundController],
  providers: [InboundService],
})
export class InboundModule {}
