import { Module } from '@nestjs/common';
import { DispatcherModule } from '../../dispatcher/publish/dispatcher.module';
import { InboundStoreModule } from '../inbound-store.module';
import { RecordingDownloadsModule } from '../../recordings/recording-downloads.module';
import { ZoomModule } from '../../zoom/zoom.module';
import { RecordingAutomationProcessor } from './recording-automation.processor';
import { RecordingAutomationService } from './recording-automation.service';

/** Worker role: the recording automation on the recordings queue. */
@Module({
  imports: [InboundStoreModule, DispatcherModule, ZoomModule, RecordingDownloadsModule],
  providers: [RecordingAutomationProcessor, RecordingAutomationService],
})
export class RecordingAutomationModule {}
