import { filterRecordingFiles, recordingFilesOf } from '../../zoom/zoom-recordings';
import { ZoomMeetingRecording } from '../../zoom/zoom.types';

/** A file as operation.complete lists it (SPEC §5): the download goes through this service. */
export interface NotifiedFile {
  id: string;
  file_type: string;
  file_size: number | null;
  download_url: string;
}

export interface FileListOptions {
  /** RECORDING_FILE_TYPES; null keeps all. */
  types: readonly string[] | null;
  /** PUBLIC_BASE_URL. */
  publicBaseUrl: string;
}

/** GET /api/meetings/:meetingId/recordings/:fileId/download on this service. */
export function downloadUrl(publicBaseUrl: string, meetingKey: string, fileId: string): string {
  return `${publicBaseUrl}/api/meetings/${encodeURIComponent(meetingKey)}/recordings/${encodeURIComponent(fileId)}/download`;
}

/**
 * The recording's files of the wanted types, each pointing at this service's download route
 * instead of the platform's URL (which needs the platform's token). The meeting is named by
 * its uuid when known (one occurrence of a recurring meeting), else by its id. Files without
 * an `id` (CC, TIMELINE) cannot be named in that route and are left out.
 */
export function notifiedFiles(
  recording: ZoomMeetingRecording,
  meetingKey: string,
  options: FileListOptions,
): NotifiedFile[] {
  return recordingFilesOf(filterRecordingFiles(recording, options.types)).flatMap((file) =>
    typeof file.id === 'string' && file.id !== ''
      ? [
          {
            id: file.id,
            file_type: String(file.file_type),
            file_size: typeof file.file_size === 'number' ? file.file_size : null,
            download_url: downloadUrl(options.publicBaseUrl, meetingKey, file.id),
          },
        ]
      : [],
  );
}
