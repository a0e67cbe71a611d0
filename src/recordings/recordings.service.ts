import { HttpStatus, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../common/api-error';
import { platformOperation } from '../platform-api/platform-operations';
import { PlatformPassthrough } from '../platform-api/platform-passthrough.service';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { ZoomApiError } from '../zoom/zoom-error';
import { ZoomClient, ZoomDownload } from '../zoom/zoom.client';
import {
  fileRef,
  filterRecordingFiles,
  filterRecordingList,
  recordingFilesOf,
} from '../zoom/zoom-recordings';
import { ZoomMeetingRecording, ZoomRecordingList, ZoomResult } from '../zoom/zoom.types';
import { FILE_TYPE, fileTypesOf } from './file-type.query';
import { RecordingDownloadStore } from './recording-download.store';
import { RECORDING_PATH_RULES } from './recording-path-rules';

const LIST_USER_RECORDINGS = platformOperation('recordingsList');
const GET_MEETING_RECORDINGS = platformOperation('recordingGet');

const queryOf = (req: Request) => new URLSearchParams(req.originalUrl.split('?')[1] ?? '');

/** Cloud recordings: platform answers filtered by file type here, and files streamed through. */
@Injectable()
export class RecordingsService {
  constructor(
    private readonly passthrough: PlatformPassthrough,
    private readonly zoom: ZoomClient,
    private readonly downloads: RecordingDownloadStore,
    private readonly cipher: SecretCipherService,
  ) {}

  async listForUser(req: Request): Promise<ZoomResult<ZoomRecordingList>> {
    const types = fileTypesOf(queryOf(req));
    const result = await this.passthrough.call<ZoomRecordingList>(
      LIST_USER_RECORDINGS,
      req,
      RECORDING_PATH_RULES,
      [FILE_TYPE],
    );
    return { ...result, body: result.body && filterRecordingList(result.body, types) };
  }

  async forMeeting(req: Request): Promise<ZoomResult<ZoomMeetingRecording>> {
    const types = fileTypesOf(queryOf(req));
    const result = await this.passthrough.call<ZoomMeetingRecording>(
      GET_MEETING_RECORDINGS,
      req,
      RECORDING_PATH_RULES,
      [FILE_TYPE],
    );
    const body = result.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw ZoomApiError.badResponse('The meeting platform sent a recording that is not an object');
    }
    return { ...result, body: filterRecordingFiles(body, types) };
  }

  /**
   * Finds the file in the meeting's recording, then opens its download_url on the platform,
   * asking for `range` when the caller did. `fileId` is the file's id, or for a file without
   * one (CC, TIMELINE) the name fileRef gives it in operation.complete. Without
   * server-to-server credentials, the link a recording event left (its download_url and
   * token) is used while the token lasts.
   */
  async download(meetingId: string, fileId: string, range?: string): Promise<ZoomDownload> {
    if (!this.zoom.configured) {
      const link = await this.downloads.find(meetingId, fileId);
      if (link && link.expiresAt.getTime() > Date.now()) {
        const token = this.cipher.decrypt(link.downloadTokenEncrypted, 'recording-download-token');
        return this.zoom.downloadWithEventToken(link.downloadUrl, token, range);
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
    const recording = await this.zoom.getMeetingRecordings(meetingId, RECORDING_PATH_RULES);
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
    return this.zoom.download(file.download_url, range);
  }
}
