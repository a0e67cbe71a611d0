import { Module } from '@nestjs/common';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { ZoomModule } from '../zoom/zoom.module';
import { RecordingDownloadsModule } from './recording-downloads.module';
import { RecordingsController } from './recordings.controller';
import { RecordingsService } from './recordings.service';

/** The recording passthrough and download of SPEC §6 (API role). */
@Module({
  imports: [ZoomModule, RecordingDownloadsModule],
  controllers: [RecordingsController],
  providers: [RecordingsService, SecretCipherService],
})
export class RecordingsModule {}
