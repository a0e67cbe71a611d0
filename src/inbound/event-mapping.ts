import { createHash } from 'node:crypto';
import { SubscriptionEvent } from '../webhooks/subscription-events';
import { PlatformObject, asRecord, asText, isRecord, recordsOf } from './platform-reader';

/** `payload.object` of a platform event: shapes vary by event, so fields are read through platform-reader. */
export type { PlatformObject } from './platform-reader';
export { asRecord, asText } from './platform-reader';
export type EventData = Record<string, unknown>;

/**
 * What identifies one occurrence of an event beyond its name and object (docs/api.md#platform-events-post-zoomevents): a meeting
 * starts once per instance, but many participants join it, one participant may join (and
 * leave) twice, a registrant may register for several occurrences, and one recording may be
 * completed twice with new files.
 */
export type IdentityRule = 'object' | 'joined' | 'left' | 'registrant' | 'recording';

/**
 * How a registration event plays in docs/api.md#platform-events-post-zoomevents's approval rules: `created` gains the registrant
 * when approved (or without a status), `approved` gains it, `withdrawn` (denied, cancelled)
 * loses it if it had been gained.
 */
export type Approval = 'created' | 'approved' | 'withdrawn';

/** What the mapping does with one platform event type. */
export type MappingRule =
  /** Published at once as `kind` with `data` built from `payload.object`. */
  | {
      kind: SubscriptionEvent;
      identity: IdentityRule;
      data: (object: PlatformObject) => EventData;
      approval?: Approval;
    }
  /** Handed to the recording automation, which publishes operation.complete or .failed. */
  | { automation: 'recording'; identity: 'recording' };

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
    ...pick(object, ['type', 'duration', 'timezone', 'start_time', 'end_time']),
  };
}

/** A copy of the object as the platform sent it (docs/api.md#platform-events-post-zoomevents: nothing it sent is dropped). */
const asSent = (value: unknown): PlatformObject => ({ ...asRecord(value) });

const withParticipant = (object: PlatformObject): EventData => ({
  ...meetingData(object),
  participant: asSent(object.participant),
});

/** Recurring meetings name the occurrences registered for beside the registrant. */
const withRegistrant = (object: PlatformObject): EventData => ({
  ...meetingData(object),
  ...pick(object, ['occurrences']),
  registrant: asSent(object.registrant),
});

const started = { kind: 'job.started', identity: 'object', data: meetingData } as const;
const ended = { kind: 'job.completed', identity: 'object', data: meetingData } as const;
const joined = { kind: 'follower.gained', identity: 'joined', data: withParticipant } as const;
const left = { kind: 'follower.lost', identity: 'left', data: withParticipant } as const;
const registration = (kind: SubscriptionEvent, approval: Approval) =>
  ({ kind, identity: 'registrant', data: withRegistrant, approval }) as const;
const registered = registration('follower.gained', 'created');
const approved = registration('follower.gained', 'approved');
const withdrawn = registration('follower.lost', 'withdrawn');
const recording = { automation: 'recording', identity: 'recording' } as const;

/**
 * docs/api.md#platform-events-post-zoomevents's mapping of platform events onto subscription events. To map another platform
 * event, add a line; anything not listed is stored, marked processed and not delivered.
 */
export const EVENT_MAPPING: Readonly<Record<string, MappingRule>> = {
  'meeting.started': started,
  'webinar.started': started,
  'meeting.ended': ended,
  'webinar.ended': ended,
  'meeting.participant_joined': joined,
  'webinar.participant_joined': joined,
  'meeting.registration_created': registered,
  'webinar.registration_created': registered,
  'meeting.registration_approved': approved,
  'webinar.registration_approved': approved,
  'meeting.participant_left': left,
  'webinar.participant_left': left,
  'meeting.registration_denied': withdrawn,
  'webinar.registration_denied': withdrawn,
  'meeting.registration_cancelled': withdrawn,
  'webinar.registration_cancelled': withdrawn,
  'recording.completed': recording,
  'recording.transcript_completed': recording,
};

/** The mapping rule of a platform event type; null when the type is not mapped. */
export function mappingRuleOf(event: string): MappingRule | null {
  return Object.hasOwn(EVENT_MAPPING, event) ? EVENT_MAPPING[event] : null;
}

/** The occurrence ids a registration names (recurring meetings), sorted; [] when none. */
export function occurrenceIds(object: PlatformObject): string[] {
  return recordsOf(object.occurrences)
    .map((o) => asText(o.occurrence_id))
    .filter((id): id is string => id !== null && id !== '')
    .sort();
}

/**
 * The events of the same family (meeting.* or webinar.*) that can gain a registrant: a loss
 * waits for those of them still being processed.
 */
export function gainingEventsOf(event: string): string[] {
  const family = event.slice(0, event.indexOf('.') + 1);
  return Object.entries(EVENT_MAPPING)
    .filter(([name, rule]) => name.startsWith(family) && gains(rule))
    .map(([name]) => name);
}

const gains = (rule: MappingRule): boolean =>
  'approval' in rule && (rule.approval === 'created' || rule.approval === 'approved');

/** One step of the approval rules: publish under `key`, if `onlyAfter` was published. */
export interface ApprovalStep {
  key: string;
  /** The registrant's gain: a loss is published only after it. */
  onlyAfter?: string;
}

/**
 * The approval rules of docs/api.md#platform-events-post-zoomevents as idempotency keys: one follower.gained (and one
 * follower.lost) per account, meeting, registrant and occurrences, however many events bring
 * it; null when the event publishes nothing (a registration waiting for approval, or denied).
 */
export function approvalStep(
  approval: Approval,
  object: PlatformObject,
  accountId: string | null,
): ApprovalStep | null {
  const registrant = asRecord(object.registrant);
  const identity = JSON.stringify([
    accountId ?? '',
    asText(object.id) ?? asText(object.uuid) ?? '',
    asText(registrant.id) ?? asText(registrant.email) ?? '',
    occurrenceIds(object),
  ]);
  // A long occurrence list must not make an index entry too large.
  const who =
    identity.length <= 256
      ? identity
      : `sha256:${createHash('sha256').update(identity).digest('hex')}`;
  const gained = `registrant:follower.gained:${who}`;
  if (approval === 'withdrawn')
    return { key: `registrant:follower.lost:${who}`, onlyAfter: gained };
  const status = registrant.status;
  if (approval === 'created' && status !== 'approved' && status !== undefined && status !== null)
    return null;
  return { key: gained };
}

/**
 * Why a mapped event cannot be mapped, or null when it can: its object names no meeting (no
 * `uuid` or `id`), or a follower event names no participant (registrant). Such an event is
 * still kept and delivered as it came to `zoom.*` subscribers (docs/api.md#platform-events-post-zoomevents), but its mapped
 * notification would say nothing true, and no retry can change that.
 */
export function unmappableReason(rule: MappingRule, payload: unknown): string | null {
  const object = asRecord(payload).object;
  if (!isRecord(object)) return 'payload.object is not an object';
  if (asText(object.uuid) === null && asText(object.id) === null) {
    return 'payload.object has neither a uuid nor an id';
  }
  if ('automation' in rule) return null;
  if (rule.identity === 'joined' || rule.identity === 'left') {
    if (!isRecord(object.participant)) return 'payload.object.participant is not an object';
  }
  if (rule.identity === 'registrant' && !isRecord(object.registrant)) {
    return 'payload.object.registrant is not an object';
  }
  return null;
}

/**
 * Why a platform event cannot be mapped, or null: a `payload` that is not an object (null, a
 * string, an array: kept and delivered as it came, docs/receiving.md) whatever the event, else
 * its mapping rule's reason. An event with no rule and an object payload is not unmappable: it
 * is simply not mapped.
 */
export function unmappableEventReason(event: string, payload: unknown): string | null {
  if (!isRecord(payload)) {
    const what = payload === null ? 'null' : Array.isArray(payload) ? 'an array' : typeof payload;
    return `payload is ${what}, not an object`;
  }
  const rule = mappingRuleOf(event);
  return rule && unmappableReason(rule, payload);
}
