import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { ZoomClient, ZoomDownload } from '../zoom/zoom.client';
import {
  filterRecordingFiles,
  filterRecordingList,
  recordingFilesOf,
} from '../zoom/zoom-recordings';
import { ZoomMeetingRecording, ZoomRecordingList, ZoomResult } from '../zoom/zoom.types';
import { DeleteRecordingsQuery, ListUserRecordingsQuery } from './dto/recordings.query';

/** Cloud recordings: platform lists filtered by file type here, and files streamed through. */
@Injectable()
export class RecordingsService {
  constructor(private readonly zoom: ZoomClient) {}

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

  /** Finds the file in the meeting's recording, then opens its download_url on the platform. */
  async download(meetingId: string, fileId: string): Promise<ZoomDownload> {
    const recording = await this.zoom.getMeetingRecordings(meetingId);
    const file = recordingFilesOf(recording).find((f) => f.id === fileId);
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
