import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RecordingDownloadEntity } from './recording-download.entity';
import { PgRecordingDownloadStore, RecordingDownloadStore } from './recording-download.store';

/**
 * recording_downloads access: written by the recording automation (worker role), read by the
 * download route (API role).
 */
@Module({
  imports: [TypeOrmModule.forFeature([RecordingDownloadEntity])],
  providers: [{ provide: RecordingDownloadStore, useClass: PgRecordingDownloadStore }],
  exports: [RecordingDownloadStore],
})
export class RecordingDownloadsModule {}
