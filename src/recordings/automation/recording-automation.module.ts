import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DispatcherModule } from '../../dispatcher/dispatcher.module';
import { EventEntity } from '../../dispatcher/event.entity';
import { InboundStoreModule } from '../../meetings/inbound/inbound-store.module';
import { ZoomModule } from '../../zoom/zoom.module';
import { RecordingAutomationProcessor } from './recording-automation.processor';
import { RecordingAutomationService } from './recording-automation.service';

/** Worker role: the recording automation on the recordings queue. */
@Module({
  imports: [
    InboundStoreModule,
    DispatcherModule,
    ZoomModule,
    // Read only: which outcome an inbound event's automation already published.
    TypeOrmModule.forFeature([EventEntity]),
  ],
  providers: [RecordingAutomationProcessor, RecordingAutomationService],
})
export class RecordingAutomationModule {}
