import { createHash } from 'node:crypto';
import { asRecord, asText } from '../../event-mapping';

/**
 * The platform events a report row stands for, in the shape the platform's webhook gives them
 * (docs/reconciliation.md#what-it-recovers): `event`, `event_ts` in milliseconds from the
 * report's own time, `payload.account_id` and `payload.object` with every field the report has
 * that the webhook's object has. Nothing the report lacks is invented (no `host_id` nor `type`
 * from the dashboard, no `participant_uuid` from participant reports).
 */

export type Family = 'meeting' | 'webinar';

export interface ReconciledEvent {
  event: string;
  event_ts: number;
  payload: { account_id: string; object: Record<string, unknown> };
}

/** A window [since, until) in milliseconds. */
export interface Window {
  since: number;
  until: number;
}

const MEETING_FIELDS = ['uuid', 'host_id', 'topic', 'type', 'start_time', 'timezone'] as const;
const PARTICIPANT_FIELDS = [
  'user_id',
  'user_name',
  'id',
  'participant_user_id',
  'email',
  'registrant_id',
  'customer_key',
] as const;

/**
 * A report field as the webhook's object has it: every field taken is text, a number or a
 * boolean. Anything else (an object or array of any depth, which JSON.stringify would have to
 * walk) is left out, as a field the report lacks.
 */
function scalar(value: unknown): string | number | boolean | undefined {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? value
    : undefined;
}

/** Copies `fields` of `from` that are scalar into `to`. */
function copyScalars(
  from: Record<string, unknown>,
  fields: readonly string[],
  to: Record<string, unknown>,
): void {
  for (const field of fields) {
    const value = scalar(from[field]);
    if (value !== undefined) to[field] = value;
  }
}

/** A report time, in ms; null when absent or unreadable. */
export function timeOf(value: unknown): number | null {
  const text = asText(value);
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

const within = (at: number | null, window: Window): at is number =>
  at !== null && at >= window.since && at < window.until;

/**
 * The dashboard writes a duration as `hh:mm:ss` or `mm:ss`; the webhook as whole minutes (an
 * integer). A number is taken as minutes already.
 */
export function durationMinutes(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value);
  if (typeof value !== 'string' || !/^\d+(:\d{1,2}){0,2}$/.test(value)) return null;
  const parts = value.split(':').map(Number);
  const [h, m, s] =
    parts.length === 3 ? parts : parts.length === 2 ? [0, ...parts] : [0, parts[0], 0];
  return Math.round(h * 60 + m + s / 60);
}

/** The meeting fields a report row carries, as the webhook's object has them (`id` a string). */
export function meetingObject(row: Record<string, unknown>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const id = asText(row.id);
  if (id !== null) object.id = id;
  copyScalars(row, MEETING_FIELDS, object);
  const duration = durationMinutes(row.duration);
  if (duration !== null) object.duration = duration;
  return object;
}

/** `<family>.started` and `<family>.ended` of a meeting or webinar of the report, in the window. */
export function meetingEvents(
  family: Family,
  row: Record<string, unknown>,
  accountId: string,
  window: Window,
): ReconciledEvent[] {
  const object = meetingObject(row);
  const events: ReconciledEvent[] = [];
  const started = timeOf(row.start_time);
  if (within(started, window)) {
    events.push({
      event: `${family}.started`,
      event_ts: started,
      payload: { account_id: accountId, object },
    });
  }
  const ended = timeOf(row.end_time);
  if (within(ended, window) && asText(row.end_time) !== null) {
    events.push({
      event: `${family}.ended`,
      event_ts: ended,
      payload: { account_id: accountId, object: { ...object, end_time: asText(row.end_time) } },
    });
  }
  return events;
}

/**
 * `<family>.participant_joined` at `join_time` and `<family>.participant_left` at `leave_time`
 * of one row of a participant report (one row per stay: a participant who rejoins has several).
 */
export function participantEvents(
  family: Family,
  meeting: Record<string, unknown>,
  row: Record<string, unknown>,
  accountId: string,
  window: Window,
): ReconciledEvent[] {
  const person: Record<string, unknown> = {};
  copyScalars(row, PARTICIPANT_FIELDS, person);
  const object = meetingObject(meeting);
  const events: ReconciledEvent[] = [];
  const joined = timeOf(row.join_time);
  if (within(joined, window)) {
    events.push({
      event: `${family}.participant_joined`,
      event_ts: joined,
      payload: {
        account_id: accountId,
        object: { ...object, participant: { ...person, join_time: asText(row.join_time) } },
      },
    });
  }
  const left = timeOf(row.leave_time);
  if (within(left, window)) {
    const leave: Record<string, unknown> = { ...person, leave_time: asText(row.leave_time) };
    if (typeof row.leave_reason === 'string') leave.leave_reason = row.leave_reason;
    events.push({
      event: `${family}.participant_left`,
      event_ts: left,
      payload: { account_id: accountId, object: { ...object, participant: leave } },
    });
  }
  return events;
}

/**
 * Fields of a participant report row that tell one stay from another when the row names no
 * participant (no `user_id`, `id`, `email`, `participant_user_id` nor `user_name`: a guest
 * dialling in, say), and that a later read of the same report gives again. Only text and
 * numbers are taken, so no value of any depth is serialised.
 */
const ROW_MARK_FIELDS = [
  'join_time',
  'device',
  'ip_address',
  'location',
  'network_type',
  'pc_name',
  'mac_addr',
  'harddisk_id',
  'domain',
  'version',
  'customer_key',
  'registrant_id',
  'role',
  'bo_mtg_id',
] as const;

/** A short, stable mark of a participant report row (ROW_MARK_FIELDS). */
export function rowMark(row: Record<string, unknown>): string {
  const fields = ROW_MARK_FIELDS.map((field) => asText(row[field]));
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex').slice(0, 24);
}

const RECORDING_FILE_FIELDS = [
  'id',
  'meeting_id',
  'recording_start',
  'recording_end',
  'file_type',
  'file_extension',
  'file_size',
  'play_url',
  'download_url',
  'status',
  'recording_type',
] as const;

const RECORDING_FIELDS = [
  'id',
  'uuid',
  'host_id',
  'topic',
  'type',
  'start_time',
  'timezone',
  'duration',
  'total_size',
  'recording_count',
  'share_url',
  'password',
  'recording_play_passcode',
] as const;

/**
 * `recording.completed` of a meeting's recording as `GET /meetings/{uuid}/recordings` lists
 * it, at the end of its last file (the platform sends the event once the files are ready); null
 * when no file is completed yet (the platform has not sent the event either).
 */
export function recordingEvent(
  recording: Record<string, unknown>,
  accountId: string,
): ReconciledEvent | null {
  const files = Array.isArray(recording.recording_files)
    ? recording.recording_files.map(asRecord)
    : [];
  if (files.length === 0 || files.some((f) => f.status !== undefined && f.status !== 'completed'))
    return null;
  const object: Record<string, unknown> = {};
  copyScalars(recording, RECORDING_FIELDS, object);
  object.recording_files = files.map((file) => {
    const kept: Record<string, unknown> = {};
    copyScalars(file, RECORDING_FILE_FIELDS, kept);
    return kept;
  });
  // A loop, not Math.max(...ends): spreading 100,000 files overflows the stack.
  let last: number | null = null;
  for (const file of files) {
    const end = timeOf(file.recording_end);
    if (end !== null && (last === null || end > last)) last = end;
  }
  const at = last ?? timeOf(recording.start_time) ?? 0;
  return { event: 'recording.completed', event_ts: at, payload: { account_id: accountId, object } };
}
