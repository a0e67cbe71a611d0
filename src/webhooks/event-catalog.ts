import { JsonSchema } from '../common/json-schema';
import { EVENT_EXAMPLES } from './event-examples';
import {
  ATTENDANCE_EVENT,
  OperationalEvent,
  SUBSCRIPTION_EVENTS,
  SubscriptionEvent,
  TEST_EVENT,
} from './subscription-events';
import { INBOUND_VIAS } from '../common/inbound-via';

export interface EventType {
  /** A subscription event kind, `webhook.test`, or `zoom.*` for the platform's events. */
  name: string;
  description: string;
  /** The notification body's schema; every body delivered of this kind validates against it. */
  schema: JsonSchema;
  /** An example notification body of this kind (docs/templates.md tries templates on it). */
  example: Record<string, unknown>;
}

/** The subscription name of the platform-event family (docs/api.md#platform-events-post-zoomevents). */
export const PLATFORM_EVENT_FAMILY = 'zoom.*';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

const text = (description: string): JsonSchema => ({ type: 'string', description });
const textOrNull = (description: string): JsonSchema => ({
  type: ['string', 'null'],
  description,
});
const time = (description: string): JsonSchema => ({
  type: 'string',
  format: 'date-time',
  description,
});

// The meeting (or webinar) fields that the service picks from the platform's object.
const MEETING_PROPERTIES: Record<string, JsonSchema> = {
  id: textOrNull("The meeting's (or webinar's) id, always as a string"),
  uuid: textOrNull('The meeting instance (occurrence) uuid'),
  topic: textOrNull('Topic'),
  host_id: textOrNull("The host's user id"),
  type: { type: 'integer', description: 'Platform meeting type (2 scheduled, 5 webinar, …)' },
  duration: { type: 'integer', description: 'Scheduled duration in minutes' },
  timezone: text('Time zone of the meeting, e.g. America/New_York'),
  start_time: time('When it started (or is scheduled to start), where known'),
  end_time: time('When it ended, where known'),
};
const MEETING_REQUIRED = ['id', 'uuid', 'topic', 'host_id'];

// Platform objects pass through as the platform sent them (docs/api.md#platform-events-post-zoomevents): the properties named here
// are the documented ones, and anything else it sends is kept.
const PARTICIPANT: JsonSchema = {
  type: 'object',
  description:
    'The participant as the platform sent it; only the documented properties are listed, ' +
    'and any other the platform sends is passed on unchanged',
  properties: {
    id: text('Participant id within the meeting (empty for guests)'),
    user_id: text('Participant id for this meeting instance'),
    participant_uuid: text('Stable participant identifier'),
    participant_user_id: text('Account user id of a signed-in participant'),
    registrant_id: text('Registrant id, when the participant registered'),
    user_name: text('Display name'),
    email: text('Email address, when known'),
    customer_key: text('The integrator-supplied customer key'),
    phone_number: text('Phone number, for phone participants'),
    join_time: time('When the participant joined (follower.gained)'),
    leave_time: time('When the participant left (follower.lost)'),
    leave_reason: text('Why the participant left'),
  },
  additionalProperties: true,
};

const REGISTRANT: JsonSchema = {
  type: 'object',
  description:
    'The registrant as the platform sent it (address, custom questions, occurrences, …); ' +
    'only the common properties are listed, and any other the platform sends is passed on',
  properties: {
    id: text('Registrant id'),
    email: text('Email address'),
    first_name: text('First name'),
    last_name: text('Last name'),
    status: text('Registration status: approved, pending, denied, …'),
    custom_questions: {
      type: 'array',
      description: 'Answers to the custom registration questions',
      items: { type: 'object', additionalProperties: true },
    },
  },
  additionalProperties: true,
};

const RECORDING_FILE: JsonSchema = {
  type: 'object',
  description: 'One recording file; download it through this service with `download_url`',
  required: ['file_type', 'download_url'],
  properties: {
    id: textOrNull(
      'Platform file id; null for files the platform lists without one (closed captions, ' +
        'timelines), which have a download_url all the same',
    ),
    file_type: text('MP4, M4A, TRANSCRIPT, CHAT, CC, TIMELINE, …'),
    file_extension: textOrNull('MP4, M4A, VTT, TXT, JSON, …'),
    file_size: { type: ['integer', 'null'], description: 'Size in bytes, when known' },
    recording_type: textOrNull(
      'shared_screen_with_speaker_view, gallery_view, audio_only, audio_transcript, …',
    ),
    recording_start: { type: ['string', 'null'], format: 'date-time', description: 'Start' },
    recording_end: { type: ['string', 'null'], format: 'date-time', description: 'End' },
    status: textOrNull('Platform processing status, e.g. completed'),
    download_url: {
      type: 'string',
      format: 'uri',
      description:
        'GET on this service (bearer token with recordings:read) streams the file; not the ' +
        "platform's own URL",
    },
  },
  additionalProperties: false,
};

const SOURCE: JsonSchema = {
  type: 'object',
  description: 'The platform event that caused this notification',
  required: ['platform', 'event', 'event_ts', 'account_id'],
  properties: {
    platform: { const: 'zoom' },
    event: text('Platform event name, e.g. meeting.started'),
    event_ts: { type: 'integer', description: 'Platform event time, milliseconds since the epoch' },
    account_id: text("The platform account's id"),
    tracking_id: textOrNull(
      "The platform's x-zm-trackingid header (null when absent): quote it to the platform's support",
    ),
    via: {
      enum: [...INBOUND_VIAS],
      description:
        'How the service learned of the platform event: its webhook, its event socket, or ' +
        'reconciliation from its reports (docs/inbound-sources.md); absent on events stored ' +
        'before it was recorded',
    },
  },
  additionalProperties: false,
};

const meetingData = (
  description: string,
  extra: Record<string, JsonSchema> = {},
  required: string[] = [],
): JsonSchema => ({
  type: 'object',
  description,
  required: [...MEETING_REQUIRED, ...required],
  properties: { ...MEETING_PROPERTIES, ...extra },
  additionalProperties: false,
});

const followerData = (description: string): JsonSchema => ({
  ...meetingData(description, {
    participant: PARTICIPANT,
    registrant: REGISTRANT,
    occurrences: {
      type: 'array',
      description:
        'Registration events of recurring meetings: the occurrences registered for, as the ' +
        'platform sent them',
      items: { type: 'object', additionalProperties: true },
    },
  }),
  // A participant (joined or left) or a registrant (registration events), never both.
  oneOf: [{ required: ['participant'] }, { required: ['registrant'] }],
});

/** The body of docs/api.md#notifications around a kind's `data` and `source`. */
function notification(
  name: string,
  description: string,
  event: JsonSchema,
  data: JsonSchema,
  source: JsonSchema,
): EventType {
  return {
    name,
    description,
    example: EVENT_EXAMPLES[name],
    schema: {
      $schema: DIALECT,
      title: `${name} notification`,
      description,
      type: 'object',
      required: ['id', 'event', 'created_at', 'data', 'source'],
      properties: {
        id: {
          type: 'string',
          format: 'uuid',
          description:
            'Event id: the same in every delivery of this event; the delivery id (the ' +
            'de-duplication key) is the webhook-id header',
        },
        event,
        created_at: time('When the event was published (UTC)'),
        data,
        source,
      },
      additionalProperties: false,
    },
  };
}

const DESCRIPTIONS: Record<SubscriptionEvent, [string, JsonSchema]> = {
  'job.started': [
    'A meeting or webinar started (platform events meeting.started, webinar.started).',
    meetingData('The meeting that started'),
  ],
  'job.completed': [
    'A meeting or webinar ended (platform events meeting.ended, webinar.ended).',
    meetingData('The meeting that ended'),
  ],
  'follower.gained': [
    'Someone joined a meeting or webinar, or their registration for it was approved (platform ' +
      'events *.participant_joined, *.registration_created with status approved, ' +
      '*.registration_approved). `data` names the meeting and carries the `participant` or the ' +
      '`registrant`.',
    followerData('The meeting, and the participant or registrant'),
  ],
  'follower.lost': [
    'Someone left a meeting or webinar, or a registration that had been gained was cancelled ' +
      'or denied (platform events *.participant_left, *.registration_cancelled, ' +
      '*.registration_denied).',
    followerData('The meeting, and the participant or registrant'),
  ],
  'operation.complete': [
    'The recording automation collected a finished recording (platform events ' +
      'recording.completed, recording.transcript_completed): `data.files` lists its files ' +
      '(of the types in RECORDING_FILE_TYPES), each downloadable through this service.',
    meetingData(
      'The recorded meeting and its files',
      {
        files: {
          type: 'array',
          description: 'The recording files',
          items: RECORDING_FILE,
        },
      },
      ['files'],
    ),
  ],
  'operation.failed': [
    'The recording automation could not collect a finished recording after its retries; ' +
      '`data.error` says why.',
    meetingData(
      'The recorded meeting and the reason',
      { error: text('Why the files could not be collected') },
      ['error'],
    ),
  ],
};

const SUBSCRIPTION_KINDS: EventType[] = SUBSCRIPTION_EVENTS.map((kind) =>
  notification(kind, DESCRIPTIONS[kind][0], { const: kind }, DESCRIPTIONS[kind][1], SOURCE),
);

const timeOrNull = (description: string): JsonSchema => ({
  type: ['string', 'null'],
  format: 'date-time',
  description,
});
const seconds = (description: string): JsonSchema => ({
  type: 'integer',
  minimum: 0,
  description,
});

const ATTENDANCE_SESSION: JsonSchema = {
  type: 'object',
  description: 'One stay in the meeting, from a join to its leave',
  required: ['join_time', 'leave_time'],
  properties: {
    join_time: time('When the participant joined'),
    leave_time: time("When they left; the occurrence's end_time when no leave came"),
    open: {
      const: true,
      description: "No leave came: the session ends at the occurrence's end_time",
    },
    join_missing: {
      const: true,
      description:
        "A leave came with no join before it: the session starts at the occurrence's start_time",
    },
  },
  additionalProperties: false,
};

const ATTENDEE: JsonSchema = {
  type: 'object',
  description:
    'One participant: the participant events of one identity (`user_id`; where empty ' +
    '`participant_user_id`, else `email`, else `user_name`)',
  required: [
    'user_id',
    'user_name',
    'email',
    'registrant_id',
    'customer_key',
    'sessions',
    'first_join',
    'last_leave',
    'duration_seconds',
  ],
  properties: {
    user_id: textOrNull('Participant id for this meeting instance'),
    user_name: textOrNull('Display name'),
    email: textOrNull('Email address, when known'),
    registrant_id: textOrNull('Registrant id, when the participant registered'),
    customer_key: textOrNull('The integrator-supplied customer key'),
    sessions: {
      type: 'array',
      description: 'Each stay, in time order; they may overlap (a leave that never came)',
      minItems: 1,
      items: ATTENDANCE_SESSION,
    },
    first_join: time('The earliest join'),
    last_leave: time('The latest leave (or end_time, for an open session)'),
    duration_seconds: seconds(
      'Time in the meeting, each moment counted once however sessions overlap',
    ),
  },
  additionalProperties: false,
};

const ATTENDANCE_KIND = notification(
  ATTENDANCE_EVENT,
  'Who attended a meeting or webinar occurrence, when and for how long, computed from its ' +
    'participant events of every source (webhook, socket, reconciliation) once it has ended ' +
    'and ATTENDANCE_SETTLE_MS has passed (docs/attendance.md). A participant event of the ' +
    'occurrence stored later sends the next `revision` once settled again, when it changes ' +
    'anything. `source.event` is meeting.ended or webinar.ended.',
  { const: ATTENDANCE_EVENT },
  {
    type: 'object',
    description: 'The occurrence and its participants',
    required: [
      'id',
      'uuid',
      'revision',
      'topic',
      'host_id',
      'start_time',
      'end_time',
      'duration_seconds',
      'participants_count',
      'participants',
    ],
    properties: {
      id: textOrNull("The meeting's (or webinar's) id, as a string"),
      uuid: text('The occurrence uuid, as the platform writes it'),
      revision: {
        type: 'integer',
        minimum: 1,
        description: '1 for the first attendance of the occurrence; each correction adds 1',
      },
      topic: textOrNull('Topic'),
      host_id: textOrNull("The host's user id"),
      start_time: timeOrNull('When the occurrence started, where known'),
      end_time: timeOrNull('When it ended'),
      duration_seconds: {
        type: ['integer', 'null'],
        minimum: 0,
        description: 'end_time − start_time; null when the start is not known',
      },
      participants_count: seconds('How many participants (identities) attended'),
      participants: {
        type: 'array',
        description: 'Every participant, by first join',
        items: ATTENDEE,
      },
    },
    additionalProperties: false,
    examples: [EVENT_EXAMPLES[ATTENDANCE_EVENT].data],
  },
  SOURCE,
);

const TEST_KIND = notification(
  TEST_EVENT,
  'Sent by POST /api/webhooks/{id}/test to that webhook only, whatever it subscribes to; no ' +
    'platform event causes it, so `source` is null.',
  { const: TEST_EVENT },
  {
    type: 'object',
    description: 'Names the webhook tested',
    required: ['webhook_id', 'message'],
    properties: {
      webhook_id: { type: 'string', format: 'uuid', description: 'The webhook tested' },
      message: text('A human-readable note'),
    },
    additionalProperties: false,
  },
  { type: 'null', description: 'Always null: no platform event caused it' },
);

const PLATFORM_FAMILY = notification(
  PLATFORM_EVENT_FAMILY,
  'Every verified platform event as it is, to webhooks subscribed to `zoom.*` or to ' +
    '`zoom.<platform event>` (zoom.meeting.created, zoom.recording.trashed, …): `event` is ' +
    '`zoom.` + the platform event name, `data` is the platform event `payload`.',
  {
    type: 'string',
    pattern: '^zoom\\.[a-z0-9_]+\\.[a-z0-9_]+$',
    description: '`zoom.` + the platform event name',
  },
  {
    description:
      "The platform's `payload` as it sent it, numbers by their own text (`account_id`, " +
      '`object`, …: an object nearly always; null, a string or an array when the platform ' +
      'sent one); the top-level `download_token` of recording events is never forwarded',
  },
  SOURCE,
);

const NO_SOURCE: JsonSchema = {
  type: 'null',
  description: 'Always null: the service itself caused it, not a platform event',
};
const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });
const OPERATIONAL_NOTE =
  " Sent to the same client's other webhooks that subscribe to it, never to the webhook " +
  'concerned; a failed delivery of a `bridge.*` event causes no further event.';

const OPERATIONAL: Record<OperationalEvent, [string, JsonSchema]> = {
  'bridge.webhook.disabled': [
    'The service disabled one of your webhooks: its receiver answered 410 Gone (`gone`), or ' +
      'its last WEBHOOK_DISABLE_AFTER_FAILURES deliveries failed (`failing`). PATCH ' +
      '`{"active": true}` enables it again; a replay recovers its deliveries.' +
      OPERATIONAL_NOTE,
    {
      type: 'object',
      description: 'The webhook disabled, and why',
      required: ['webhook_id', 'url', 'reason', 'disabled_at'],
      properties: {
        webhook_id: uuid('The webhook disabled'),
        url: text('Its URL'),
        reason: { enum: ['gone', 'failing'], description: 'Why it was disabled' },
        disabled_at: time('When it was disabled'),
      },
      additionalProperties: false,
    },
  ],
  'bridge.delivery.failed': [
    'A delivery to one of your webhooks ended `failed` after its retries.' + OPERATIONAL_NOTE,
    {
      type: 'object',
      description: 'The delivery that failed, as its delivery log shows it',
      required: [
        'delivery_id',
        'webhook_id',
        'event',
        'event_id',
        'attempt_count',
        'last_status_code',
        'last_error',
      ],
      properties: {
        delivery_id: uuid('The delivery that failed'),
        webhook_id: uuid('The webhook it was for'),
        event: text('Its event kind'),
        event_id: uuid('Its event (GET /api/events/{id})'),
        attempt_count: { type: 'integer', description: 'Attempts made' },
        last_status_code: {
          type: ['integer', 'null'],
          description: "The receiver's last status code; null when it gave no answer",
        },
        last_error: textOrNull('What went wrong at the last attempt'),
      },
      additionalProperties: false,
    },
  ],
  'bridge.reconciliation.completed': [
    'A reconciliation run ended (docs/reconciliation.md): what it created, per platform event. ' +
      'Sent to the webhooks that subscribe to it of clients holding `bridge:admin`; a failed ' +
      'delivery of a `bridge.*` event causes no further event.',
    {
      type: 'object',
      description: 'The run, as GET /api/reconciliations/{id} shows it, in short',
      required: ['id', 'trigger', 'since', 'until', 'status', 'created'],
      properties: {
        id: uuid('The run (GET /api/reconciliations/{id})'),
        trigger: {
          enum: ['manual', 'schedule', 'gap'],
          description: 'On demand, the schedule, or after a gap of the platform socket',
        },
        since: time('Start of the window reconciled (included)'),
        until: time('End of the window reconciled (excluded)'),
        status: {
          enum: ['succeeded', 'partial', 'failed'],
          description:
            '`partial`: a source the credentials may not read was skipped; `failed`: the ' +
            'platform could not be reached',
        },
        created: {
          type: 'object',
          description: 'Platform events created, per platform event name',
          additionalProperties: { type: 'integer' },
        },
      },
      additionalProperties: false,
    },
  ],
  'bridge.account.disconnected': [
    'The platform refused to renew the tokens of an account you installed (docs/accounts.md): ' +
      'it is `needs_reinstall` until it is installed again (POST /api/platform/installs). ' +
      'Sent to the webhooks that subscribe to it of the client that installed the account; a ' +
      'failed delivery of a `bridge.*` event causes no further event.',
    {
      type: 'object',
      description: 'The account, and what the platform said',
      required: ['account_id', 'reason'],
      properties: {
        account_id: text('The platform account'),
        reason: text("The platform's reason for refusing the refresh token"),
      },
      additionalProperties: false,
    },
  ],
  'bridge.account.deauthorized': [
    'An account you installed uninstalled the app, or you removed it (docs/accounts.md): its ' +
      'tokens are deleted and its stored events and deliveries are deleted within 10 minutes. ' +
      'Sent to the webhooks that subscribe to it of the client that installed the account; a ' +
      'failed delivery of a `bridge.*` event causes no further event.',
    {
      type: 'object',
      description: 'The account, and how it left',
      required: ['account_id', 'reason', 'deauthorized_at'],
      properties: {
        account_id: text('The platform account'),
        reason: {
          enum: ['app_deauthorized', 'removed'],
          description: 'Uninstalled on the platform, or removed through the API',
        },
        deauthorized_at: time('When it left'),
      },
      additionalProperties: false,
    },
  ],
};

const OPERATIONAL_KINDS: EventType[] = Object.entries(OPERATIONAL).map(
  ([kind, [description, data]]) =>
    notification(kind, description, { const: kind }, data, NO_SOURCE),
);

/**
 * GET /api/event-types, in this order: the six kinds, meeting.attendance (docs/attendance.md), webhook.test, zoom.* (docs/receiving.md), then the
 * operational events (docs/operations.md).
 */
export const EVENT_TYPES: readonly EventType[] = [
  ...SUBSCRIPTION_KINDS,
  ATTENDANCE_KIND,
  TEST_KIND,
  PLATFORM_FAMILY,
  ...OPERATIONAL_KINDS,
];
