import type { ExamplesObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { SUBSCRIPTION_EVENTS, SubscriptionEvent } from '../../webhooks/subscription-events';
import { routeOf } from '../event-mapping';

/** Example bodies for Swagger only: what the platform sends, and what subscribers receive. */

const ACCOUNT_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const MEETING = {
  id: '85746065432',
  uuid: '4444AAAiAAAAAiAiAiiAii==',
  host_id: 'x1yCzABCDEfg23HiJKl4mN',
  topic: 'Bridge test',
  type: 2,
  start_time: '2025-01-01T10:00:05Z',
  timezone: 'UTC',
  duration: 30,
};
const PARTICIPANT = {
  user_id: '16778240',
  user_name: 'Jill Chill',
  id: '',
  participant_uuid: '55FF8A1B-0000-4E3F-9D1B-000000000001',
  email: 'jchill@example.com',
  registrant_id: '',
  participant_user_id: '',
  customer_key: 'crm-contact-349',
  phone_number: '+18001234567',
};
const REGISTRANT = {
  id: '9tboDiHUQAeOnbmudzWa01',
  first_name: 'Jill',
  last_name: 'Chill',
  email: 'jchill@example.com',
  address: '1800 Amphibious Blvd.',
  city: 'Mountain View',
  country: 'US',
  zip: '94045',
  state: 'CA',
  phone: '5550100',
  org: 'Cooking Org',
  job_title: 'Chef',
  custom_questions: [{ title: 'What do you hope to learn from this?', value: 'Make food' }],
  status: 'approved',
};
const TRACKING_ID = 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a';
const RECORDING_FILE = {
  meeting_id: MEETING.uuid,
  recording_start: '2025-01-01T10:00:10Z',
  recording_end: '2025-01-01T10:29:50Z',
  status: 'completed',
};
const RECORDING_FILES = {
  MP4: {
    ...RECORDING_FILE,
    id: 'a1b2c3d4-0001',
    file_type: 'MP4',
    file_extension: 'MP4',
    file_size: 3400000,
    download_url: 'https://example.zoom.us/rec/download/x',
    recording_type: 'shared_screen_with_speaker_view',
  },
  TRANSCRIPT: {
    ...RECORDING_FILE,
    id: 'a1b2c3d4-0002',
    file_type: 'TRANSCRIPT',
    file_extension: 'VTT',
    file_size: 95663,
    download_url: 'https://example.zoom.us/rec/download/y',
    recording_type: 'audio_transcript',
  },
};

type Example = { summary: string; value: unknown };

function platformEvent(event: string, eventTs: number, object: Record<string, unknown>) {
  return { event, event_ts: eventTs, payload: { account_id: ACCOUNT_ID, object } };
}

/** "meeting.started → job.started", read from the mapping so the two cannot drift apart. */
function summaryOf(event: string): string {
  const route = routeOf(event);
  if (!route) return event;
  if ('kind' in route && route.approval) {
    return route.approval === 'withdrawn'
      ? `${event} → ${route.kind}, if the registrant had been gained`
      : `${event} → ${route.kind}, once per registrant and meeting, when approved`;
  }
  return 'kind' in route
    ? `${event} → ${route.kind}`
    : `${event} → recording automation → operation.complete / operation.failed`;
}

type MeetingObject = typeof MEETING;

/**
 * The meeting and follower events: event suffix, time, and the object's fields beyond the
 * meeting's. Webinar events have the same shapes on a webinar object (`type` 5), so each row
 * gives both the meeting.* and the webinar.* example.
 */
const MEETING_LIKE_EVENTS: [string, number, (base: MeetingObject) => Record<string, unknown>][] = [
  ['started', 1735725605123, () => ({})],
  ['ended', 1735727405123, () => ({ end_time: '2025-01-01T10:30:05Z' })],
  [
    'participant_joined',
    1735725700456,
    () => ({ participant: { ...PARTICIPANT, join_time: '2025-01-01T10:01:40Z' } }),
  ],
  [
    'participant_left',
    1735726800789,
    () => ({
      participant: {
        ...PARTICIPANT,
        leave_time: '2025-01-01T10:20:00Z',
        leave_reason: 'left the meeting',
      },
    }),
  ],
  // Registration events carry the id as a number, and the registrant's personal join link.
  [
    'registration_created',
    1735700000000,
    (base) => ({
      id: Number(base.id),
      registrant: { ...REGISTRANT, join_url: `https://example.zoom.us/w/${base.id}?tk=…` },
    }),
  ],
  [
    'registration_approved',
    1735705000000,
    (base) => ({ id: Number(base.id), registrant: { ...REGISTRANT, status: undefined } }),
  ],
  [
    'registration_denied',
    1735705000000,
    (base) => ({ id: Number(base.id), registrant: { ...REGISTRANT, status: undefined } }),
  ],
  [
    'registration_cancelled',
    1735710000000,
    (base) => ({ id: Number(base.id), registrant: REGISTRANT }),
  ],
];
const WEBINAR: MeetingObject = {
  ...MEETING,
  id: '93451234567',
  uuid: 'WbnR8xKSQ0ix7BrZkNTqVw==',
  topic: 'Bridge webinar',
  type: 5,
};

const meetingLikeExamples = (prefix: 'meeting' | 'webinar', base: MeetingObject) =>
  MEETING_LIKE_EVENTS.map(([suffix, eventTs, extra]): [string, Example] => {
    const event = `${prefix}.${suffix}`;
    return [
      event,
      {
        summary: summaryOf(event),
        value: platformEvent(event, eventTs, { ...base, ...extra(base) }),
      },
    ];
  });

/** A recording event: the meeting, the files it names, and the top-level download_token. */
function recordingExample(event: string, eventTs: number, files: object[]): Example {
  const sizes = files.map((f) => (f as { file_size: number }).file_size);
  return {
    summary: summaryOf(event),
    value: {
      ...platformEvent(event, eventTs, {
        ...MEETING,
        id: 85746065432,
        total_size: sizes.reduce((a, b) => a + b, 0),
        recording_count: files.length,
        recording_files: files,
      }),
      download_token: 'eyJ0eXAiOiJKV1Qi…',
    },
  };
}

const examples: Record<string, Example> = {
  'endpoint.url_validation': {
    summary: 'URL validation (answered with plainToken and encryptedToken)',
    value: {
      event: 'endpoint.url_validation',
      event_ts: 1735725605123,
      payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
    },
  },
  ...Object.fromEntries(meetingLikeExamples('meeting', MEETING)),
  ...Object.fromEntries(meetingLikeExamples('webinar', WEBINAR)),
  'recording.completed': recordingExample('recording.completed', 1735729800000, [
    RECORDING_FILES.MP4,
    RECORDING_FILES.TRANSCRIPT,
  ]),
  // Names only the new transcript; the automation narrows the API's file list to it.
  'recording.transcript_completed': recordingExample(
    'recording.transcript_completed',
    1735731000000,
    [RECORDING_FILES.TRANSCRIPT],
  ),
};

export const PLATFORM_EVENT_EXAMPLES: ExamplesObject = examples;

const DOWNLOAD_BASE =
  'https://bridge.example.com/api/meetings/4444AAAiAAAAAiAiAiiAii%3D%3D/recordings';
const MEETING_DATA = {
  id: MEETING.id,
  uuid: MEETING.uuid,
  topic: MEETING.topic,
  host_id: MEETING.host_id,
  type: MEETING.type,
  duration: MEETING.duration,
  timezone: MEETING.timezone,
  start_time: MEETING.start_time,
};
/** A file as operation.complete lists it: the platform's fields, this service's link. */
const notified = (file: typeof RECORDING_FILES.MP4, ref: string | null) => ({
  id: file.id,
  file_type: file.file_type,
  file_extension: file.file_extension,
  file_size: file.file_size,
  recording_type: file.recording_type,
  recording_start: file.recording_start,
  recording_end: file.recording_end,
  status: file.status,
  download_url: `${DOWNLOAD_BASE}/${ref ?? file.id}/download`,
});
const SOURCE_EVENTS: Record<SubscriptionEvent, [string, number]> = {
  'job.started': ['meeting.started', 1735725605123],
  'job.completed': ['meeting.ended', 1735727405123],
  'follower.gained': ['meeting.participant_joined', 1735725700456],
  'follower.lost': ['meeting.registration_cancelled', 1735710000000],
  'operation.complete': ['recording.completed', 1735729800000],
  'operation.failed': ['recording.completed', 1735729800000],
};

/** `data` of each subscription event kind, as this service builds it (SPEC §4, §5). */
export const NOTIFICATION_DATA_EXAMPLES: Record<SubscriptionEvent, Record<string, unknown>> = {
  'job.started': MEETING_DATA,
  'job.completed': { ...MEETING_DATA, end_time: '2025-01-01T10:30:05Z' },
  'follower.gained': {
    ...MEETING_DATA,
    participant: { ...PARTICIPANT, join_time: '2025-01-01T10:01:40Z' },
  },
  'follower.lost': { ...MEETING_DATA, registrant: REGISTRANT },
  'operation.complete': {
    ...MEETING_DATA,
    files: [
      notified(RECORDING_FILES.MP4, null),
      notified(RECORDING_FILES.TRANSCRIPT, null),
      // A closed-caption file: the platform gives it no id; its link names it all the same.
      {
        ...notified(
          {
            ...RECORDING_FILES.TRANSCRIPT,
            file_type: 'CC',
            file_size: 1304,
            recording_type: 'closed_caption',
          },
          'cc-5d0c6f7d2a51e9b0c3a4f812',
        ),
        id: null,
      },
    ],
  },
  'operation.failed': {
    ...MEETING_DATA,
    error: 'platform answered 404 to GET /meetings/{uuid}/recordings',
  },
};

export function notificationExample(kind: SubscriptionEvent) {
  const [event, eventTs] = SOURCE_EVENTS[kind];
  return {
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    event: kind,
    created_at: '2025-01-01T10:00:05.412Z',
    data: NOTIFICATION_DATA_EXAMPLES[kind],
    source: {
      platform: 'zoom',
      event,
      event_ts: eventTs,
      account_id: ACCOUNT_ID,
      tracking_id: TRACKING_ID,
    },
  };
}

/** Examples of the catalog entries beyond the six kinds (GET /api/event-types). */
const OTHER_NOTIFICATION_EXAMPLES: Record<string, object> = {
  'webhook.test': {
    id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    event: 'webhook.test',
    created_at: '2025-01-01T09:30:00.000Z',
    data: {
      webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
      message: 'Test notification sent from POST /api/webhooks/{id}/test',
    },
    source: null,
  },
  'zoom.*': {
    id: '3f333df6-90a4-4fda-8dd3-9485d27cee36',
    event: 'zoom.meeting.started',
    created_at: '2025-01-01T10:00:05.412Z',
    data: { account_id: ACCOUNT_ID, object: MEETING },
    source: {
      platform: 'zoom',
      event: 'meeting.started',
      event_ts: 1735725605123,
      account_id: ACCOUNT_ID,
    },
  },
  'bridge.webhook.disabled': {
    id: '5b1e0a3c-6f2d-4c8e-9a71-2d4f6b8c0e13',
    event: 'bridge.webhook.disabled',
    created_at: '2025-01-01T10:07:41.020Z',
    data: {
      webhook_id: '0b5e5a8e-3c1d-4f47-8d0a-6a3c2f4b9e11',
      url: 'https://hooks.example.com/meetings',
      reason: 'failing',
      disabled_at: '2025-01-01T10:07:41.006Z',
    },
    source: null,
  },
  'bridge.delivery.failed': {
    id: '9d2c4e6a-1b3f-4a5c-8e7d-0f1a2b3c4d5e',
    event: 'bridge.delivery.failed',
    created_at: '2025-01-01T10:07:40.987Z',
    data: {
      delivery_id: '7d6f0c64-58b1-4a5e-9c1e-3f7f6b1f2a10',
      webhook_id: '0b5e5a8e-3c1d-4f47-8d0a-6a3c2f4b9e11',
      event: 'job.started',
      event_id: 'c3b1e2d4-5f60-4a7b-8c9d-0e1f2a3b4c5d',
      attempt_count: 4,
      last_status_code: 503,
      last_error: 'HTTP 503',
    },
    source: null,
  },
};

/** A notification body of an event catalog entry (a kind, `webhook.test`, `zoom.*`, `bridge.*`). */
export function catalogExample(name: string): object {
  return (SUBSCRIPTION_EVENTS as readonly string[]).includes(name)
    ? notificationExample(name as SubscriptionEvent)
    : OTHER_NOTIFICATION_EXAMPLES[name];
}
