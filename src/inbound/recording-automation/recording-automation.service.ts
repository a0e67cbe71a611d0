import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { PlatformObject } from '../event-mapping';
import { ZoomClient } from '../../zoom/zoom.client';
import { ZoomMeetingRecording, ZoomRecordingFile } from '../../zoom/zoom.types';
import { NotifiedFile, notifiedFiles } from './recording-files';

const FILE_LISTS = ['recording_files', 'participant_audio_files'] as const;

/**
 * Collects a finished recording's files for operation.complete: from the platform API when
 * the server-to-server credentials are configured (the current list, with the files' state
 * as the platform has it now), else from the event itself. Throws when neither gives a list.
 */
@Injectable()
export class RecordingAutomationService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly zoom: ZoomClient,
  ) {}

  /** The uuid names one occurrence of a (possibly recurring) meeting; the id is the fallback. */
  meetingKey(object: PlatformObject): string {
    for (const value of [object.uuid, object.id]) {
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') {
        return String(value);
      }
    }
    throw new Error('the recording event names no meeting uuid or id');
  }

  async collectFiles(event: string, object: PlatformObject): Promise<NotifiedFile[]> {
    const key = this.meetingKey(object);
    const fromEvent = object as ZoomMeetingRecording;
    const options = {
      types: this.config.recordingFileTypes,
      publicBaseUrl: this.config.publicBaseUrl,
    };
    if (this.zoom.configured) {
      const current = await this.zoom.getMeetingRecordings(key);
      return notifiedFiles(onlyNamedFiles(current, fromEvent), key, options);
    }
    if (!Array.isArray(fromEvent.recording_files)) {
      throw new Error(`the ${event} event has no recording_files list`);
    }
    return notifiedFiles(fromEvent, key, options);
  }
}

/**
 * The API lists every file of the recording; an event such as recording.transcript_completed
 * names only the new ones, so the list is narrowed to the file ids the event names (if any).
 */
function onlyNamedFiles(
  current: ZoomMeetingRecording,
  event: ZoomMeetingRecording,
): ZoomMeetingRecording {
  const named = new Set(
    FILE_LISTS.flatMap((list) => (Array.isArray(event[list]) ? event[list] : [])).map(
      (file: ZoomRecordingFile) => file.id,
    ),
  );
  named.delete(undefined);
  if (named.size === 0) return current;
  const narrowed: ZoomMeetingRecording = { ...current };
  for (const list of FILE_LISTS) {
    const files = current[list];
    if (Array.isArray(files)) narrowed[list] = files.filter((file) => named.has(file.id));
  }
  return narrowed;
}
