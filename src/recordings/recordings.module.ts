import { Module } from '@nestjs/common';
import { PlatformApiModule } from '../platform-api/platform-api.module';
import { ZoomModule } from '../zoom/zoom.module';
import { RecordingsController } from './recordings.controller';
import { RecordingsService } from './recordings.service';

/** The recording routes of SPEC §6 that do more than pass on: file_type, downloads (API role). */
@Module({
  imports: [ZoomModule, PlatformApiModule],
  controllers: [RecordingsController],
  providers: [RecordingsService],
})
export class RecordingsModule {}
