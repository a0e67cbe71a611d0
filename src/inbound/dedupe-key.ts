import { createHash } from 'node:crypto';
import { stringifyPrecise } from '../common/precise-json';
import { fileRef, recordingFilesOf } from '../zoom/zoom-recordings';
import { ZoomMeetingRecording } from '../zoom/zoom.types';
import { IdentityRule, asRecord, asText, occurrenceIds, mappingRuleOf } from './event-mapping';
import { PlatformEnvelope } from './platform-envelope';

// A unique btree entry must stay far below PostgreSQL's ~2.7 kB limit.
const MAX_READABLE_KEY = 512;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** The object's own identity: its uuid, else its id (number or string alike), else none. */
function objectParts(object: Record<string, unknown>): string[] {
  const uuid = asText(object.uuid);
  if (uuid) return ['uuid', uuid];
  const id = asText(object.id);
  if (id) return ['id', id];
  return [];
}

/** A time as one spelling (the report and the webhook may differ in fractions); else as sent. */
function instant(value: unknown): string {
  const text = asText(value) ?? '';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

/**
 * Who a participant is, by what both the webhook and the platform's participant reports carry
 * (docs/reconciliation.md#identity): the participant's `user_id`, which the platform numbers per
 * meeting. `participant_uuid` is not in the reports, so it is used only where `user_id` is
 * missing (then `id`, then `email`, then `participant_user_id`, then `user_name`, the last two
 * added after the others so that no key stored before changes): a redelivery carries the same
 * fields and resolves the same way. '' when the participant carries none of them.
 */
export function participantWho(p: Record<string, unknown>): string {
  return (
    asText(p.user_id) ||
    asText(p.participant_uuid) ||
    asText(p.id) ||
    asText(p.email) ||
    asText(p.participant_user_id) ||
    asText(p.user_name) ||
    ''
  );
}

/** A participant occurrence: who (participantWho) and the time of the join or the leave. */
function participantParts(rule: 'joined' | 'left', p: Record<string, unknown>): string[] {
  const who = participantWho(p);
  // Where the platform omits the leave time (some webinar leaves) the join it ends tells it apart.
  if (rule === 'left' && asText(p.leave_time))
    return ['participant', who, 'left', instant(p.leave_time)];
  return ['participant', who, 'joined', instant(p.join_time)];
}

function occurrenceParts(rule: IdentityRule, object: Record<string, unknown>): string[] {
  switch (rule) {
    case 'joined':
    case 'left':
      return participantParts(rule, asRecord(object.participant));
    case 'registrant': {
      const occurrences = occurrenceIds(object);
      const id = ['registrant', asText(asRecord(object.registrant).id) ?? ''];
      return occurrences.length > 0 ? [...id, 'occurrences', occurrences.join(',')] : id;
    }
    case 'recording':
      // A host who stops and restarts recording causes a second event with new files; a
      // redelivery lists the same files (with other download URLs, which are not part of this).
      return [
        'files',
        recordingFilesOf(object as ZoomMeetingRecording)
          .map(fileRef)
          .sort()
          .join(','),
      ];
    case 'object':
      return [];
  }
}

/**
 * The de-duplication key (docs/reconciliation.md#identity): event name + `payload.object.uuid`, plus the
 * participant's `user_id` and join or leave time for participant events (participantParts), the registrant id and occurrences for
 * registration events, and the recording's file ids for recording events.
 * Never a hash of the whole body: redeliveries differ in tokens and download URLs.
 *
 * Fallbacks, where the platform gives less:
 * - no `uuid`: the object's `id`, as a string (so 123 and "123" collide, as they should);
 * - unmapped events also add `event_ts`: events such as `meeting.updated` recur for one object,
 *   and each occurrence is worth keeping, while a redelivery repeats its `event_ts`;
 * - no object identity at all: `event_ts` and a hash of `payload` (without the top-level
 *   `download_token`, which is not part of `payload`).
 */
export function dedupeKey(envelope: PlatformEnvelope): string {
  const object = asRecord(asRecord(envelope.payload).object);
  const route = mappingRuleOf(envelope.event);
  const own = objectParts(object);
  const parts = [envelope.event, ...own, ...occurrenceParts(route?.identity ?? 'object', object)];
  const eventTs = asText(envelope.event_ts) ?? '';
  if (own.length === 0) {
    // Written out only here, where it is hashed. A payload left out is hashed as nothing at
    // all (JSON has no text for it).
    const payload = envelope.payload === undefined ? '' : stringifyPrecise(envelope.payload);
    parts.push('ts', eventTs, 'payload', sha256(payload));
  } else if (!route) parts.push('ts', eventTs);
  const key = JSON.stringify(parts);
  return key.length <= MAX_READABLE_KEY ? key : `sha256:${sha256(key)}`;
}
