import { Module } from '@nestjs/common';
import { passthroughController } from '../platform-api/passthrough.controller';
import { PlatformApiModule } from '../platform-api/platform-api.module';
import { PLATFORM_OPERATIONS } from '../platform-api/platform-operations';
import { ZoomModule } from '../zoom/zoom.module';
import { RecordingDownloadsModule } from './recording-downloads.module';
import { RECORDING_PATH_RULES } from './recording-path-rules';
import { RecordingsController } from './recordings.controller';
import { RecordingsService } from './recordings.service';

/** Operations RecordingsController serves itself, because it filters their answer (file_type). */
const OWN_ROUTES = new Set(['recordingGet', 'recordingsList']);

/**
 * The Cloud Recording passthrough of docs/api.md#platform-passthrough (API role): the group's operations as they are,
 * plus the routes that do more than pass on (file_type filter, streamed and ranged download).
 */
@Module({
  imports: [ZoomModule, PlatformApiModule, RecordingDownloadsModule],
  controllers: [
    RecordingsController,
    passthroughController(
      'RecordingsPassthroughController',
      PLATFORM_OPERATIONS.filter((op) => op.group === 'Cloud Recording' && !OWN_ROUTES.has(op.id)),
      RECORDING_PATH_RULES,
    ),
  ],
  providers: [RecordingsService],
})
export class RecordingsModule {}
