import { storableText } from '../../common/unicode';
import { fileRef, filterRecordingFiles, recordingFilesOf } from '../../zoom/zoom-recordings';
import { ZoomMeetingRecording, ZoomRecordingFile } from '../../zoom/zoom.types';

/**
 * A file as operation.complete lists it (docs/api.md#platform-events-post-zoomevents): what the platform says of it, with the
 * download going through this service. `id` is null for the files the platform gives none
 * (CC, TIMELINE); they get a download_url all the same.
 */
export interface NotifiedFile {
  id: string | null;
  file_type: string | null;
  file_extension: string | null;
  file_size: number | null;
  recording_type: string | null;
  recording_start: string | null;
  recording_end: string | null;
  status: string | null;
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
  return `${publicBaseUrl}/api/meetings/${pathSegment(meetingKey)}/recordings/${pathSegment(fileId)}/download`;
}

/** encodeURIComponent throws on an unpaired surrogate, which a platform id may hold: U+FFFD. */
const pathSegment = (text: string): string => encodeURIComponent(storableText(text));

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** The wanted files of a recording, as the platform listed them (both file lists). */
export function wantedFiles(
  recording: ZoomMeetingRecording,
  types: readonly string[] | null,
): ZoomRecordingFile[] {
  return recordingFilesOf(filterRecordingFiles(recording, types));
}

/**
 * The recording's files of the wanted types, each pointing at this service's download route
 * instead of the platform's URL (which needs the platform's token). The meeting is named by
 * its uuid when known (one occurrence of a recurring meeting), else by its id; a file by its
 * `id`, else by the name fileRef derives for it.
 */
export function notifiedFiles(
  recording: ZoomMeetingRecording,
  meetingKey: string,
  options: FileListOptions,
): NotifiedFile[] {
  return wantedFiles(recording, options.types).map((file) => ({
    id: typeof file.id === 'string' && file.id !== '' ? file.id : null,
    file_type: text(file.file_type),
    file_extension: text(file.file_extension),
    file_size: typeof file.file_size === 'number' ? file.file_size : null,
    recording_type: text(file.recording_type),
    recording_start: text(file.recording_start),
    recording_end: text(file.recording_end),
    status: text(file.status),
    download_url: downloadUrl(options.publicBaseUrl, meetingKey, fileRef(file)),
  }));
}
