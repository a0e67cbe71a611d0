import { createHash } from 'node:crypto';
import { stringifyPrecise } from '../common/precise-json';
import { ZoomMeetingRecording, ZoomRecordingFile, ZoomRecordingList } from './zoom.types';

/** The platform's recording file types (its documentation and OpenAPI document). */
export const RECORDING_FILE_TYPES = [
  'MP4',
  'M4A',
  'CHAT',
  'TRANSCRIPT',
  'CSV',
  'TB',
  'CC',
  'CHAT_MESSAGE',
  'SUMMARY',
  'TIMELINE',
] as const;

/** The two file lists a recording carries; every per-file rule applies to both. */
export const FILE_LISTS = ['recording_files', 'participant_audio_files'] as const;

/**
 * The recording with only files of the given types (both file lists). `null` keeps all. The
 * platform's own totals (`recording_count`, `total_size`) are left as it sent them.
 */
export function filterRecordingFiles(
  recording: ZoomMeetingRecording,
  types: readonly string[] | null,
): ZoomMeetingRecording {
  if (types === null) return recording;
  const wanted = new Set(types.map((t) => t.toUpperCase()));
  const keep = (file: unknown) =>
    isFile(file) && wanted.has(typeText(file.file_type).toUpperCase());
  const filtered: ZoomMeetingRecording = { ...recording };
  for (const list of FILE_LISTS) {
    const files = recording[list];
    if (Array.isArray(files)) filtered[list] = files.filter(keep);
  }
  return filtered;
}

/** A user's recording list filtered by type; meetings left with no matching file are dropped. */
export function filterRecordingList(
  list: ZoomRecordingList,
  types: readonly string[] | null,
): ZoomRecordingList {
  if (types === null || !Array.isArray(list.meetings)) return list;
  const meetings = list.meetings
    .map((meeting) => filterRecordingFiles(meeting, types))
    .filter((meeting) => FILE_LISTS.some((name) => (meeting[name]?.length ?? 0) > 0));
  return { ...list, meetings };
}

/** A file type as text; anything but a string (null, an object) has none. */
const typeText = (value: unknown): string => (typeof value === 'string' ? value : '');

const isFile = (file: unknown): file is ZoomRecordingFile =>
  typeof file === 'object' && file !== null && !Array.isArray(file);

/**
 * Every file of a recording, from both lists. What the platform sent is not taken on trust: a
 * list that is not an array counts as none, and an entry that is not an object (a null) is
 * skipped.
 */
export function recordingFilesOf(recording: ZoomMeetingRecording): ZoomRecordingFile[] {
  return FILE_LISTS.flatMap((list) => {
    const files: unknown = recording[list];
    return Array.isArray(files) ? files.filter(isFile) : [];
  });
}

/**
 * How this service names a file in its download route: the platform's `id`, or for files the
 * platform gives none (CC, TIMELINE) a name derived from what describes the file and stays
 * the same across redeliveries and the API's listing (never its download_url, which varies).
 */
export function fileRef(file: ZoomRecordingFile): string {
  if (typeof file.id === 'string' && file.id !== '') return file.id;
  const type = (typeText(file.file_type) || 'file').toLowerCase().replace(/[^a-z0-9_]/g, '');
  const digest = createHash('sha256')
    .update(
      stringifyPrecise([
        file.file_type ?? null,
        file.file_extension ?? null,
        file.recording_type ?? null,
        file.recording_start ?? null,
        file.recording_end ?? null,
      ]),
    )
    .digest('hex')
    .slice(0, 24);
  return `${type || 'file'}-${digest}`;
}
