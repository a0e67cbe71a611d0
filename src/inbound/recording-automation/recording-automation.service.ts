import { HttpException, Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { DispatcherService } from '../../dispatcher/publish/dispatcher.service';
import { orderKeyOf } from '../../dispatcher/publish/order-key';
import { RecordingDownloadStore } from '../../recordings/recording-download.store';
import { RECORDING_PATH_RULES } from '../../recordings/recording-path-rules';
import { isDotSegment } from '../../zoom/zoom-operations';
import { FILE_LISTS, fileRef, recordingFilesOf } from '../../zoom/zoom-recordings';
import { ZoomClient } from '../../zoom/zoom.client';
import { ZoomMeetingRecording, ZoomRecordingFile } from '../../zoom/zoom.types';
import { PlatformObject, meetingData } from '../event-mapping';
import {
  UnmappableEventError,
  asString,
  asText,
  isDeterministicFailure,
  isRecord,
} from '../platform-reader';
import { storableText } from '../../common/unicode';
import { InboundEventEntity } from '../inbound-event.entity';
import { InboundEventStore } from '../inbound-event.store';
import { automationOutcomeKey, platformObjectOf, sourceOf } from '../inbound-job';
import { NotifiedFile, notifiedFiles, wantedFiles } from './recording-files';

const storable = (text: string): boolean => storableText(text) === text;

/** How long the platform's download_token opens the files: "about 24 hours". */
export const DOWNLOAD_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

interface Outcome {
  kind: 'operation.complete' | 'operation.failed';
  data: Record<string, unknown>;
}

/** The reason given to subscribers: the platform's status and message, never a token or URL. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof HttpException
    ? `meeting platform call failed (${error.getStatus()}): ${message}`
    : message;
}

/**
 * The recording automation (docs/api.md#platform-events-post-zoomevents): for a stored recording.completed or
 * recording.transcript_completed event, publish operation.complete with the recording's files
 * behind this service's download route; when the files cannot be collected on the last of its
 * attempts, publish operation.failed with the reason instead. One of them is published per
 * event, once (both share one idempotency key), and only then is the inbound event marked
 * processed.
 */
@Injectable()
export class RecordingAutomationService {
  private readonly logger = new Logger(RecordingAutomationService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly zoom: ZoomClient,
    private readonly store: InboundEventStore,
    private readonly dispatcher: DispatcherService,
    private readonly downloads: RecordingDownloadStore,
  ) {}

  /**
   * Runs the automation for one stored event. `finalAttempt` says whether this is the job's
   * last run: only then does a failure to collect the files become operation.failed; before,
   * it is thrown so that the job retries. `what` names the run in log lines.
   */
  async complete(inboundEventId: string, finalAttempt: boolean, what: string): Promise<void> {
    const row = await this.store.findById(inboundEventId);
    if (!row || row.processedAt) return;
    const key = automationOutcomeKey(row);
    const earlier = await this.dispatcher.published(key);
    if (earlier) this.logger.log(`${what}: ${earlier.kind} was published before; it stands`);
    const outcome = earlier ?? (await this.decide(row, finalAttempt, what));
    // With an earlier outcome nothing is added: publish only queues its deliveries again.
    await this.dispatcher.publish({
      ...outcome,
      source: sourceOf(row),
      idempotencyKey: key,
      orderKey: orderKeyOf(platformObjectOf(row)),
      traceContext: row.traceContext,
    });
    // A run of the same event may have published in between: whichever came first stands.
    const kept = earlier ?? (await this.dispatcher.published(key)) ?? outcome;
    const error = kept.kind === 'operation.failed' ? String(kept.data.error) : null;
    await this.store.markProcessed(row, error);
  }

  /** operation.complete with the files, or on the last attempt operation.failed. */
  private async decide(
    row: InboundEventEntity,
    finalAttempt: boolean,
    what: string,
  ): Promise<Outcome> {
    const object = platformObjectOf(row);
    try {
      const files = await this.collectFiles(row, object);
      return { kind: 'operation.complete', data: { ...meetingData(object), files } };
    } catch (error) {
      const reason = reasonOf(error);
      // What the event holds fails the same way on every run: final at once, not retried.
      const final = finalAttempt || isDeterministicFailure(error);
      // The platform's status goes into the message the job runner logs and Bull keeps.
      if (!final) throw new Error(reason, { cause: error });
      this.logger.error(`${what}: ${reason}; final: publishing operation.failed`);
      return { kind: 'operation.failed', data: { ...meetingData(object), error: reason } };
    }
  }

  /** The uuid names one occurrence of a (possibly recurring) meeting; the id is the fallback. */
  meetingKey(object: PlatformObject): string {
    for (const value of [object.uuid, object.id]) {
      const key = asText(value);
      if (key !== null && isDotSegment(key))
        throw new UnmappableEventError(
          `the recording event's meeting ${JSON.stringify(key)} cannot be put in a path`,
        );
      if (key !== null && key !== '') return key;
    }
    throw new UnmappableEventError('the recording event names no meeting uuid or id');
  }

  /**
   * The recording's files for operation.complete: from the platform API when the
   * server-to-server credentials are configured (the current list, with the files' state as
   * the platform has it now), else from the event itself, whose download_token then opens
   * the links. Throws when neither gives a list.
   */
  async collectFiles(row: InboundEventEntity, object: PlatformObject): Promise<NotifiedFile[]> {
    const key = this.meetingKey(object);
    const fromEvent = object as ZoomMeetingRecording;
    const options = {
      types: this.config.recordingFileTypes,
      publicBaseUrl: this.config.publicBaseUrl,
    };
    if (this.zoom.configured) {
      const current = await this.zoom.getMeetingRecordings(key, RECORDING_PATH_RULES);
      return notifiedFiles(onlyNamedFiles(current, fromEvent), key, options);
    }
    if (!Array.isArray(fromEvent.recording_files)) {
      throw new UnmappableEventError(`the ${row.event} event has no recording_files list`);
    }
    await this.keepEventDownloads(row, key, fromEvent);
    return notifiedFiles(fromEvent, key, options);
  }

  /**
   * Event-only links: each listed file's download_url with the event's token (still
   * encrypted) until the token expires, for the download route. Without a token the links
   * answer as before: 503 until the credentials are configured.
   */
  private async keepEventDownloads(
    row: InboundEventEntity,
    meetingKey: string,
    recording: ZoomMeetingRecording,
  ): Promise<void> {
    // A key PostgreSQL's text cannot hold (U+0000) could never be looked up by a link either.
    if (row.downloadTokenEncrypted === null || !storable(meetingKey)) return;
    // One entry per file name (two files the platform sent alike would collide in one insert).
    const byRef = new Map<string, string>();
    for (const file of wantedFiles(recording, this.config.recordingFileTypes)) {
      const url = asString(file.download_url);
      const ref = fileRef(file);
      if (url !== null && url !== '' && storable(url) && storable(ref)) byRef.set(ref, url);
    }
    const files = [...byRef].map(([ref, downloadUrl]) => ({ fileRef: ref, downloadUrl }));
    // Counted from the event's arrival: the platform sends the token with the event.
    const expiresAt = new Date(row.receivedAt.getTime() + DOWNLOAD_TOKEN_LIFETIME_MS);
    await this.downloads.save(meetingKey, files, row.downloadTokenEncrypted, expiresAt);
  }
}

/**
 * The API lists every file of the recording; an event such as recording.transcript_completed
 * names only the new ones, so the list is narrowed to the files the event names (if any): by
 * id, and for the files without one (CC, TIMELINE) by their type.
 */
function onlyNamedFiles(
  current: ZoomMeetingRecording,
  event: ZoomMeetingRecording,
): ZoomMeetingRecording {
  const listed = recordingFilesOf(event);
  const named = new Set(listed.map((file) => file.id).filter((id) => id !== undefined));
  if (named.size === 0) return current;
  const idlessTypes = new Set(listed.filter((f) => f.id === undefined).map((f) => f.file_type));
  const wanted = (file: ZoomRecordingFile) =>
    file.id === undefined ? idlessTypes.has(file.file_type) : named.has(file.id);
  const narrowed: ZoomMeetingRecording = { ...current };
  for (const list of FILE_LISTS) {
    const files = current[list];
    if (Array.isArray(files)) narrowed[list] = files.filter((f) => isRecord(f) && wanted(f));
  }
  return narrowed;
}
