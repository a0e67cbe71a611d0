import type { ServerResponse } from 'node:http';
import {
  ZoomEvent,
  asWebinar,
  meetingEnded,
  meetingStarted,
  meetingUuid,
  participantJoined,
  participantLeft,
  recordingCompleted,
} from '../../scripts/platform/zoom-events';
import { FakeMeeting, FakeZoom, RecordedRequest } from './fake-zoom';

/**
 * The platform's dashboard reports over a FakeZoom (docs/reconciliation.md): a day of meetings
 * and webinars with their participants and recordings, whose reports and webhook bodies tell of
 * the same occurrences, so a test can deliver some by webhook and leave the rest missed.
 *
 * The webhook bodies come from the builders of scripts/platform/zoom-events.ts; the report rows
 * are read off those bodies (user_id, names, times), as the platform's reports carry them.
 */

export type Family = 'meeting' | 'webinar';
export type ReportSource =
  'meetings' | 'webinars' | 'meeting_participants' | 'webinar_participants' | 'recordings';

export interface DayMeeting {
  family: Family;
  meeting: FakeMeeting;
  start: string;
  end: string | null;
  /** Participant webhook bodies (joins and leaves), in time order. */
  participants: ZoomEvent[];
  recording: boolean;
}

export interface DayOptions {
  /** The day's first start, ISO; meetings start `spacingMs` apart. */
  from: string;
  meetings: number;
  webinars?: number;
  participantsEach?: number;
  /** Every `recordingEvery`th meeting has a cloud recording (0: none). */
  recordingEvery?: number;
  spacingMs?: number;
  durationMs?: number;
}

/**
 * A report listing answered page by page from a script rather than the day: what the platform
 * might send that the bridge must not trust (a token it sent before, pages without end, rows
 * naming no one, a listing far bigger than memory). Pages are made when asked for, so the test
 * process holds one at a time.
 */
export interface ScriptedListing {
  /**
   * The page for `token` ('' for the first), the `pageIndex`th asked for (from 0). `json`, when
   * given, is sent as the rows' JSON text instead of `rows` (values deeper than JSON.stringify
   * can walk, written as text).
   */
  page(token: string, pageIndex: number): { rows: unknown[]; next: string; json?: string };
}

/** `total` rows `perPage` at a time, `rowAt(i)` made when its page is asked for. */
export function pagedRows(
  total: number,
  rowAt: (i: number) => unknown,
  perPage = 300,
): ScriptedListing {
  return {
    page(token) {
      const start = Number(token || 0);
      const end = Math.min(total, start + perPage);
      const rows: unknown[] = [];
      for (let i = start; i < end; i++) rows.push(rowAt(i));
      return { rows, next: end < total ? String(end) : '' };
    },
  };
}

/** Pages of `rows` whose tokens go round `cycle` tokens for ever (the platform repeating one). */
export function repeatingTokens(rows: unknown[], cycle = 1): ScriptedListing {
  return { page: (_token, i) => ({ rows, next: `again-${i % cycle}` }) };
}

/** A new token on every page, never the end: a listing without end. */
export function endlessPages(rowsAt: (pageIndex: number) => unknown[]): ScriptedListing {
  return { page: (_token, i) => ({ rows: rowsAt(i), next: `page-${i + 1}` }) };
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

const objectOf = (event: ZoomEvent) =>
  (event.payload as { object: Record<string, unknown> }).object;

export class FakeReports {
  readonly day: DayMeeting[] = [];
  /** Each report call, with when it came (ms): the request rate test counts them per second. */
  readonly hits: { source: ReportSource; at: number }[] = [];
  /** How long each report answer takes, as the platform's do over the internet (benches). */
  latencyMs = 0;
  private readonly refusals = new Map<ReportSource, { status: number; message: string }>();
  /** Dashboard rows listed beside the day's (a uuid `..`, say), per family. */
  private readonly extraRows: Record<Family, Record<string, unknown>[]> = {
    meeting: [],
    webinar: [],
  };
  /** Listings answered by a script: a source's whole listing, or one meeting's participants. */
  private readonly scripts = new Map<string, { listing: ScriptedListing; pages: number }>();
  /** Recording answers made by a function (a recording of 100,000 files), by meeting uuid. */
  private readonly recordingAnswers = new Map<string, () => unknown>();

  constructor(private readonly zoom: FakeZoom) {
    zoom.routes.push((res, rec) => this.route(res, rec));
  }

  /** `source` answers `status` with `message` from now on (403: the scope is missing). */
  refuse(
    source: ReportSource,
    status = 403,
    message = 'Invalid access token, does not contain scopes:[dashboard_webinars:read:admin].',
  ): void {
    this.refusals.set(source, { status, message });
  }

  allow(source: ReportSource): void {
    this.refusals.delete(source);
  }

  /** A dashboard row listed with the day's meetings (or webinars), as it is given. */
  addDashboardRow(family: Family, row: Record<string, unknown>): void {
    this.extraRows[family].push(row);
  }

  /** `source`'s listing (`meetings`, `webinars`) answered by `listing` instead of the day. */
  scriptListing(source: 'meetings' | 'webinars', listing: ScriptedListing): void {
    this.scripts.set(source, { listing, pages: 0 });
  }

  /** The participant report of the meeting or webinar `uuid` answered by `listing`. */
  scriptParticipants(uuid: string, listing: ScriptedListing): void {
    this.scripts.set(`participants:${uuid}`, { listing, pages: 0 });
  }

  /** How many pages of a scripted listing were asked for. */
  pagesServed(key: 'meetings' | 'webinars' | `participants:${string}`): number {
    return this.scripts.get(key)?.pages ?? 0;
  }

  /** `GET /meetings/{uuid}/recordings` answered by `answer()` (made at each request). */
  scriptRecording(uuid: string, answer: () => unknown): void {
    this.recordingAnswers.set(uuid, answer);
  }

  /** Adds a day of meetings (then webinars), each with its participants and maybe a recording. */
  addDay(options: DayOptions): DayMeeting[] {
    const spacing = options.spacingMs ?? 60_000;
    const duration = options.durationMs ?? 30 * 60_000;
    const each = options.participantsEach ?? 2;
    const added: DayMeeting[] = [];
    const total = options.meetings + (options.webinars ?? 0);
    const start0 = Date.parse(options.from);
    for (let i = 0; i < total; i++) {
      const family: Family = i < options.meetings ? 'meeting' : 'webinar';
      const startMs = start0 + i * spacing;
      const meeting = this.zoom.addMeeting('host-1', {
        uuid: meetingUuid(Date.parse(options.from) + this.day.length),
        type: family === 'meeting' ? 2 : 5,
        topic: `Day ${family} ${i}`,
        start_time: iso(startMs),
        duration: Math.round(duration / 60_000),
        status: 'ended',
      });
      const participants: ZoomEvent[] = [];
      for (let n = 1; n <= each; n++) {
        const joined = participantJoined(meeting.uuid, n, iso(startMs + n * 1000));
        const left = participantLeft(meeting.uuid, n, iso(startMs + duration - n * 1000));
        participants.push(
          ...(family === 'webinar' ? [asWebinar(joined), asWebinar(left)] : [joined, left]),
        );
      }
      const every = options.recordingEvery ?? 0;
      const recording = every > 0 && i % every === 0;
      if (recording) {
        this.zoom.addRecording(meeting, [
          {
            id: `${meeting.id}-mp4`,
            file_type: 'MP4',
            file_extension: 'MP4',
            file_size: 1024,
            recording_type: 'shared_screen_with_speaker_view',
            content_type: 'video/mp4',
          },
        ]);
      }
      const day: DayMeeting = {
        family,
        meeting,
        start: iso(startMs),
        end: iso(startMs + duration),
        participants,
        recording,
      };
      this.day.push(day);
      added.push(day);
    }
    return added;
  }

  /** Every webhook body the platform sends for `m`: started, joins, leaves, ended, recording. */
  webhooks(m: DayMeeting): ZoomEvent[] {
    const family = (event: ZoomEvent) => (m.family === 'webinar' ? asWebinar(event) : event);
    const own = (event: ZoomEvent, at: string) => {
      Object.assign(objectOf(event), {
        id: String(m.meeting.id),
        topic: m.meeting.topic,
        start_time: m.start,
      });
      event.event_ts = Date.parse(at);
      return event;
    };
    const events = [family(own(meetingStarted(m.meeting.uuid), m.start)), ...m.participants];
    if (m.end !== null) {
      const ended = family(own(meetingEnded(m.meeting.uuid), m.end));
      objectOf(ended).end_time = m.end;
      events.push(ended);
    }
    if (m.recording) {
      const completed = recordingCompleted(m.meeting.uuid, this.zoom.issueDownloadToken());
      Object.assign(objectOf(completed), {
        id: m.meeting.id,
        recording_files: this.zoom.recordingFilesOf(m.meeting),
      });
      events.push(completed);
    }
    return events;
  }

  private route(res: ServerResponse, rec: RecordedRequest): boolean {
    const parts = (rec.apiPath ?? '').split('/').slice(1);
    const source = this.sourceOf(parts);
    if (source === null || rec.method !== 'GET') return false;
    const send = (status: number, answer: unknown) =>
      this.latencyMs > 0
        ? setTimeout(() => reply(res, status, answer), this.latencyMs)
        : reply(res, status, answer);
    this.hits.push({ source, at: Date.now() });
    const refusal = this.refusals.get(source);
    if (refusal) {
      send(refusal.status, { code: 4711, message: refusal.message });
      return true;
    }
    // /metrics/meetings/{uuid}/participants, /meetings/{uuid}/recordings
    const segment = source === 'recordings' ? parts[1] : parts[2];
    const uuid =
      source === 'meetings' || source === 'webinars'
        ? ''
        : decodeURIComponent(decodeURIComponent(segment));
    if (source === 'recordings') {
      const answer = this.recordingAnswers.get(uuid);
      if (!answer) return false; // FakeZoom's own route answers it
      send(200, answer());
      return true;
    }
    const script = this.scripts.get(
      source === 'meetings' || source === 'webinars' ? source : `participants:${uuid}`,
    );
    if (script) {
      const key = source === 'meetings' || source === 'webinars' ? source : 'participants';
      const { rows, next, json } = script.listing.page(
        rec.query.get('next_page_token') ?? '',
        script.pages++,
      );
      if (json === undefined) {
        send(200, { page_size: rows.length, next_page_token: next, [key]: rows });
        return true;
      }
      const text = `{"next_page_token":${JSON.stringify(next)},"${key}":${json}}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
      return true;
    }
    if (source === 'meetings' || source === 'webinars') {
      const family: Family = source === 'meetings' ? 'meeting' : 'webinar';
      const live = rec.query.get('type') === 'live';
      const rows = this.day
        .filter((m) => m.family === family && (m.end === null) === live)
        .map((m) => this.dashboardRow(m));
      if (!live) for (const row of this.extraRows[family]) rows.push(row);
      send(200, page(rows, rec.query, source));
      return true;
    }
    const found = this.day.find((m) => m.meeting.uuid === uuid);
    if (!found) {
      send(404, { code: 3001, message: 'Meeting ID is invalid or has not ended.' });
      return true;
    }
    send(200, page(this.participantRows(found), rec.query, 'participants'));
    return true;
  }

  private sourceOf(parts: string[]): ReportSource | null {
    if (parts[0] === 'metrics' && parts.length === 2) {
      return parts[1] === 'meetings' ? 'meetings' : parts[1] === 'webinars' ? 'webinars' : null;
    }
    if (parts[0] === 'metrics' && parts.length === 4 && parts[3] === 'participants') {
      return parts[1] === 'meetings' ? 'meeting_participants' : 'webinar_participants';
    }
    if (parts[0] === 'meetings' && parts.length === 3 && parts[2] === 'recordings')
      return 'recordings';
    return null;
  }

  /** The dashboard's row of a meeting: no host_id nor type, a `hh:mm:ss` duration. */
  private dashboardRow(m: DayMeeting): Record<string, unknown> {
    const seconds = m.end === null ? 0 : (Date.parse(m.end) - Date.parse(m.start)) / 1000;
    const hh = String(Math.floor(seconds / 3600)).padStart(2, '0');
    const mm = String(Math.floor((seconds % 3600) / 60)).padStart(2, '0');
    const ss = String(seconds % 60).padStart(2, '0');
    return {
      uuid: m.meeting.uuid,
      id: m.meeting.id,
      topic: m.meeting.topic,
      host: 'Fake Host',
      email: 'host@example.com',
      user_type: 'Licensed',
      start_time: m.start,
      ...(m.end === null ? {} : { end_time: m.end }),
      duration: `${hh}:${mm}:${ss}`,
      participants: m.participants.length / 2,
      has_recording: m.recording,
      has_video: true,
    };
  }

  /** One row per stay, as the participant report lists it, read off the webhook bodies. */
  private participantRows(m: DayMeeting): Record<string, unknown>[] {
    const rows = new Map<string, Record<string, unknown>>();
    for (const event of m.participants) {
      const p = objectOf(event).participant as Record<string, unknown>;
      const row = rows.get(p.user_id as string) ?? {
        id: p.id,
        user_id: p.user_id,
        user_name: p.user_name,
        email: p.email,
        participant_user_id: p.participant_user_id,
        device: 'Mac',
        ip_address: '192.0.2.1',
        location: 'Berlin (DE)',
        network_type: 'Wifi',
        status: 'in_meeting',
      };
      if (p.join_time && event.event.endsWith('joined')) row.join_time = p.join_time;
      if (p.leave_time) {
        row.leave_time = p.leave_time;
        // The report's own words, not the webhook's (test/report-fake-contract.e2e-spec.ts).
        row.leave_reason = `${String(p.user_name)} left the ${m.family}.`;
      }
      rows.set(p.user_id as string, row);
    }
    return [...rows.values()];
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function page(rows: unknown[], query: URLSearchParams, key: string): Record<string, unknown> {
  const size = Math.min(Number(query.get('page_size') ?? 30) || 30, 300);
  const start = Number(
    Buffer.from(query.get('next_page_token') ?? '', 'base64url').toString() || 0,
  );
  const next =
    start + size < rows.length ? Buffer.from(String(start + size)).toString('base64url') : '';
  return {
    page_size: size,
    total_records: rows.length,
    next_page_token: next,
    [key]: rows.slice(start, start + size),
  };
}

export const RECONCILED_EVENTS = (m: DayMeeting): number =>
  2 + m.participants.length + (m.recording ? 1 : 0);
