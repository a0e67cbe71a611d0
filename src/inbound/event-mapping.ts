import { SubscriptionEvent } from '../webhooks/subscription-events';

/** `payload.object` of a platform event: shapes vary by event, so fields are read defensively. */
export type PlatformObject = Record<string, unknown>;
export type EventData = Record<string, unknown>;

/**
 * What identifies one occurrence of an event beyond its name and object (SPEC §5): a meeting
 * starts once per instance, but many participants join it, and one participant may join twice.
 */
export type IdentityRule = 'object' | 'participant' | 'registrant';

export type InboundRoute =
  /** Published at once as `kind` with `data` built from `payload.object`. */
  | { kind: SubscriptionEvent; identity: IdentityRule; data: (object: PlatformObject) => EventData }
  /** Handed to the recording automation, which publishes operation.complete or .failed. */
  | { automation: 'recording'; identity: 'object' };

export const asText = (value: unknown): string | null =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : null;

export const asRecord = (value: unknown): PlatformObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as PlatformObject)
    : {};

/** The named fields that are present, in a fixed order (absent ones are left out, not nulled). */
function pick(source: PlatformObject, keys: readonly string[]): EventData {
  const out: EventData = {};
  for (const key of keys)
    if (source[key] !== undefined && source[key] !== null) out[key] = source[key];
  return out;
}

/** Meeting (or webinar) identifiers; `id` is a number in some events and a string in others. */
export function meetingData(object: PlatformObject): EventData {
  return {
    id: asText(object.id),
    uuid: asText(object.uuid),
    topic: asText(object.topic),
    host_id: asText(object.host_id),
    ...pick(object, ['start_time', 'end_time']),
  };
}

const PARTICIPANT_FIELDS = [
  'id',
  'user_id',
  'participant_uuid',
  'participant_user_id',
  'registrant_id',
  'user_name',
  'email',
  'join_time',
  'leave_time',
  'leave_reason',
] as const;

// The registrant's join_url is a personal link that admits its holder: not forwarded.
const REGISTRANT_FIELDS = ['id', 'email', 'first_name', 'last_name', 'status'] as const;

const withParticipant = (object: PlatformObject): EventData => ({
  ...meetingData(object),
  participant: pick(asRecord(object.participant), PARTICIPANT_FIELDS),
});

const withRegistrant = (object: PlatformObject): EventData => ({
  ...meetingData(object),
  registrant: pick(asRecord(object.registrant), REGISTRANT_FIELDS),
});

const started = { kind: 'job.started', identity: 'object', data: meetingData } as const;
const ended = { kind: 'job.completed', identity: 'object', data: meetingData } as const;
const joined = { kind: 'follower.gained', identity: 'participant', data: withParticipant } as const;
const left = { kind: 'follower.lost', identity: 'participant', data: withParticipant } as const;
const registered = {
  kind: 'follower.gained',
  identity: 'registrant',
  data: withRegistrant,
} as const;
const cancelled = { kind: 'follower.lost', identity: 'registrant', data: withRegistrant } as const;
const recording = { automation: 'recording', identity: 'object' } as const;

/**
 * SPEC §5's mapping of platform events onto subscription events. To map another platform
 * event, add a line; anything not listed is stored, marked processed and not delivered.
 */
export const EVENT_MAPPING: Readonly<Record<string, InboundRoute>> = {
  'meeting.started': started,
  'webinar.started': started,
  'meeting.ended': ended,
  'webinar.ended': ended,
  'meeting.participant_joined': joined,
  'webinar.participant_joined': joined,
  'meeting.registration_created': registered,
  'webinar.registration_created': registered,
  'meeting.participant_left': left,
  'webinar.participant_left': left,
  'meeting.registration_cancelled': cancelled,
  'webinar.registration_cancelled': cancelled,
  'recording.completed': recording,
  'recording.transcript_completed': recording,
};

export function routeOf(event: string): InboundRoute | null {
  return Object.hasOwn(EVENT_MAPPING, event) ? EVENT_MAPPING[event] : null;
}
