/**
 * The parts of platform answers this service reads. Answers are passed on whole, so these
 * types name only what the code relies on; anything else rides along untouched.
 */
export interface ZoomRecordingFile {
  /** Absent on CC and TIMELINE files. */
  id?: string;
  meeting_id?: string;
  recording_start?: string;
  recording_end?: string;
  file_type?: string;
  file_extension?: string;
  file_size?: number;
  download_url?: string;
  play_url?: string;
  status?: string;
  recording_type?: string;
  [field: string]: unknown;
}

export interface ZoomMeetingRecording {
  uuid?: string;
  id?: number | string;
  host_id?: string;
  topic?: string;
  start_time?: string;
  duration?: number;
  total_size?: number;
  recording_count?: number;
  recording_files?: ZoomRecordingFile[];
  participant_audio_files?: ZoomRecordingFile[];
  [field: string]: unknown;
}

export interface ZoomRecordingList {
  from?: string;
  to?: string;
  page_size?: number;
  total_records?: number;
  next_page_token?: string;
  meetings?: ZoomMeetingRecording[];
  [field: string]: unknown;
}

/**
 * A platform answer: its status (2xx), its tracking id and rate-limit headers, and its JSON
 * body (undefined when it had none).
 */
export interface ZoomResult<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T | undefined;
}
