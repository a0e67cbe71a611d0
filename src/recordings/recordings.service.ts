import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { ZoomClient, ZoomDownload } from '../zoom/zoom.client';
import {
  fileRef,
  filterRecordingFiles,
  filterRecordingList,
  recordingFilesOf,
} from '../zoom/zoom-recordings';
import { ZoomMeetingRecording, ZoomRecordingList, ZoomResult } from '../zoom/zoom.types';
import { DeleteRecordingsQuery, ListUserRecordingsQuery } from './dto/recordings.query';
import { RecordingDownloadStore } from './recording-download.store';

/** Cloud recordings: platform lists filtered by file type here, and files streamed through. */
@Injectable()
export class RecordingsService {
  constructor(
    private readonly zoom: ZoomClient,
    private readonly downloads: RecordingDownloadStore,
    private readonly cipher: SecretCipherService,
  ) {}

  async listForUser(
    userId: string,
    { file_type: fileTypes, ...query }: ListUserRecordingsQuery,
  ): Promise<ZoomResult<ZoomRecordingList>> {
    const result = await this.zoom.call<ZoomRecordingList>('listUserRecordings', {
      params: { userId },
      query,
    });
    return { ...result, body: result.body && filterRecordingList(result.body, fileTypes ?? null) };
  }

  async forMeeting(meetingId: string, fileTypes?: string[]): Promise<ZoomMeetingRecording> {
    return filterRecordingFiles(await this.zoom.getMeetingRecordings(meetingId), fileTypes ?? null);
  }

  remove(meetingId: string, query: DeleteRecordingsQuery): Promise<ZoomResult> {
    return this.zoom.call('deleteMeetingRecordings', {
      params: { meetingId },
      query: { ...query },
    });
  }

  /**
   * Finds the file in the meeting's recording, then opens its download_url on the platform.
   * `fileId` is the file's id, or for a file without one (CC, TIMELINE) the name fileRef
   * gives it in operation.complete. Without server-to-server credentials, the link that a
   * recording event left (its download_url and token) is used while the token lasts.
   */
  async download(meetingId: string, fileId: string): Promise<ZoomDownload> {
    if (!this.zoom.configured) {
      const link = await this.downloads.find(meetingId, fileId);
      if (link && link.expiresAt.getTime() > Date.now()) {
        const token = this.cipher.decrypt(link.downloadTokenEncrypted, 'recording-download-token');
        return this.zoom.downloadWithEventToken(link.downloadUrl, token);
      }
      if (link) {
        throw new ApiError(
          HttpStatus.GONE,
          `The download token of the recording event for file ${fileId} has expired; ` +
            'with ZOOM_ACCOUNT_ID, ZOOM_CLIENT_ID and ZOOM_CLIENT_SECRET set, downloads do not expire',
        );
      }
      // No link: getMeetingRecordings answers 503, naming the missing credentials.
    }
    const recording = await this.zoom.getMeetingRecordings(meetingId);
    const file = recordingFilesOf(recording).find((f) => fileRef(f) === fileId);
    if (!file) {
      throw new ApiError(
        HttpStatus.NOT_FOUND,
        `Recording file ${fileId} is not part of the recording of meeting ${meetingId}`,
      );
    }
    if (typeof file.download_url !== 'string' || file.download_url === '') {
      throw new ApiError(HttpStatus.NOT_FOUND, `Recording file ${fileId} has no download_url yet`);
    }
    return this.zoom.download(file.download_url);
  }
}
