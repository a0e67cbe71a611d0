import type { ExamplesObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { SUBSCRIPTION_EVENTS, SubscriptionEvent } from '../../webhooks/subscription-events';
import { EVENT_EXAMPLES } from '../../webhooks/event-examples';
import { EventData, meetingData, mappingRuleOf } from '../event-mapping';
import { notificationSource } from '../inbound-job';
import { sampleEvent } from '../sample-events';
import { VIA } from '../../common/inbound-via';

/** Example bodies for Swagger only: what the platform sends, and what subscribers receive. */

const TRACKING_ID = 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a';

type Example = { summary: string; value: unknown };

/** "meeting.started → job.started", read from the mapping so the two cannot drift apart. */
function summaryOf(event: string): string {
  const rule = mappingRuleOf(event);
  if (!rule) return event;
  if ('kind' in rule && rule.approval) {
    return rule.approval === 'withdrawn'
      ? `${event} → ${rule.kind}, if the registrant had been gained`
      : `${event} → ${rule.kind}, once per registrant and meeting, when approved`;
  }
  return 'kind' in rule
    ? `${event} → ${rule.kind}`
    : `${event} → recording automation → operation.complete / operation.failed`;
}

/** The meeting and registration events; the webinar.* ones have the same shapes. */
const MEETING_LIKE_EVENTS = [
  'started',
  'ended',
  'participant_joined',
  'participant_left',
  'registration_created',
  'registration_approved',
  'registration_denied',
  'registration_cancelled',
];

/** The platform events the Swagger page shows, from the sample-event corpus. */
const EXAMPLE_EVENTS = [
  'endpoint.url_validation',
  ...MEETING_LIKE_EVENTS.map((suffix) => `meeting.${suffix}`),
  ...MEETING_LIKE_EVENTS.map((suffix) => `webinar.${suffix}`),
  'recording.completed',
  'recording.transcript_completed',
];

const examples: Record<string, Example> = Object.fromEntries(
  EXAMPLE_EVENTS.map((event) => [
    event,
    {
      summary:
        event === 'endpoint.url_validation'
          ? 'URL validation (answered with plainToken and encryptedToken)'
          : summaryOf(event),
      value: sampleEvent(event),
    },
  ]),
);

export const PLATFORM_EVENT_EXAMPLES: ExamplesObject = examples;

const objectOf = (event: string) => sampleEvent(event).payload.object;
const ACCOUNT_ID = sampleEvent('meeting.started').payload.account_id;
/** `data` of a mapped event's sample, as the mapping makes it. */
const mappedData = (event: string): EventData => {
  const rule = mappingRuleOf(event);
  if (!rule || !('kind' in rule)) throw new Error(`${event} is not mapped to a kind`);
  return rule.data(objectOf(event));
};
const MEETING = objectOf('meeting.started');
const MEETING_DATA = meetingData(MEETING);
const RECORDING_FILES = Object.fromEntries(
  (objectOf('recording.completed').recording_files as RecordingFile[])
    .concat(objectOf('recording.transcript_completed').recording_files as RecordingFile[])
    .map((file) => [file.file_type, file]),
) as Record<'MP4' | 'TRANSCRIPT', RecordingFile>;

interface RecordingFile {
  id: string;
  file_type: string;
  file_extension: string;
  file_size: number;
  recording_type: string;
  recording_start: string;
  recording_end: string;
  status: string;
}

const DOWNLOAD_BASE = `https://bridge.example.com/api/meetings/${encodeURIComponent(
  String(MEETING.uuid),
)}/recordings`;
/** A file as operation.complete lists it: the platform's fields, this service's link. */
const notified = (file: RecordingFile, ref: string | null) => ({
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
/** The platform event each kind's example comes from. */
const SOURCE_EVENTS: Record<SubscriptionEvent, string> = {
  'job.started': 'meeting.started',
  'job.completed': 'meeting.ended',
  'follower.gained': 'meeting.participant_joined',
  'follower.lost': 'meeting.registration_cancelled',
  'operation.complete': 'recording.completed',
  'operation.failed': 'recording.completed',
};

/** `data` of each subscription event kind, as this service builds it (docs/api.md#event-kinds). */
export const NOTIFICATION_DATA_EXAMPLES: Record<SubscriptionEvent, Record<string, unknown>> = {
  'job.started': mappedData('meeting.started'),
  'job.completed': mappedData('meeting.ended'),
  'follower.gained': mappedData('meeting.participant_joined'),
  'follower.lost': mappedData('meeting.registration_cancelled'),
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
  const sample = sampleEvent(SOURCE_EVENTS[kind]);
  return {
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    event: kind,
    created_at: '2025-01-01T10:00:05.412Z',
    data: NOTIFICATION_DATA_EXAMPLES[kind],
    source: notificationSource({
      event: sample.event,
      eventTs: sample.event_ts,
      accountId: sample.payload.account_id,
      trackingId: TRACKING_ID,
      receivedAt: new Date(sample.event_ts),
      via: VIA.webhook,
    }),
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
  'bridge.reconciliation.completed': {
    id: '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b',
    event: 'bridge.reconciliation.completed',
    created_at: '2025-01-01T13:00:02.345Z',
    data: {
      id: '0190a1b2-0000-7e5f-8a6b-7c8d9e0f1a2b',
      trigger: 'schedule',
      since: '2024-12-31T10:30:00.000Z',
      until: '2025-01-01T11:30:00.000Z',
      status: 'succeeded',
      created: {
        'meeting.participant_joined': 12,
        'meeting.participant_left': 12,
        'meeting.ended': 1,
      },
    },
    source: null,
  },
};

/** A notification body of an event catalog entry (a kind, `webhook.test`, `zoom.*`, `bridge.*`). */
export function catalogExample(name: string): object {
  return (SUBSCRIPTION_EVENTS as readonly string[]).includes(name)
    ? notificationExample(name as SubscriptionEvent)
    : (OTHER_NOTIFICATION_EXAMPLES[name] ?? EVENT_EXAMPLES[name]);
}
