import { Module } from '@nestjs/common';
import { ZoomModule } from '../zoom/zoom.module';
import { RecordingsController } from './recordings.controller';
import { RecordingsService } from './recordings.service';

/** The recording passthrough and download of SPEC §6 (API role). */
@Module({
  imports: [ZoomModule],
  controllers: [RecordingsController],
  providers: [RecordingsService],
})
export class RecordingsModule {}
