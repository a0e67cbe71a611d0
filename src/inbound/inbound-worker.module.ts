import { Module } from '@nestjs/common';
import { DispatcherModule } from '../dispatcher/publish/dispatcher.module';
import { InboundStoreModule } from './inbound-store.module';
import { InboundProcessor } from './inbound.processor';
import { InboundSweeper } from './inbound.sweeper';

/** Worker role: maps and publishes stored platform events, and re-queues lost ones. */
@Module({
  imports: [InboundStoreModule, DispatcherModule],
  providers: [InboundProcessor, InboundSweeper],
})
export class InboundWorkerModule {}
