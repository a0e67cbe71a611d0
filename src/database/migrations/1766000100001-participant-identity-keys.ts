import { createHash } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';

const PARTICIPANT_EVENTS = [
  'meeting.participant_joined',
  'meeting.participant_left',
  'webinar.participant_joined',
  'webinar.participant_left',
];
const BATCH = 1000;
const MAX_READABLE_KEY = 512;

type Json = Record<string, unknown>;
const record = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
const text = (value: unknown): string | null =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : null;
function instant(value: unknown): string {
  const spelled = text(value) ?? '';
  const ms = Date.parse(spelled);
  return Number.isNaN(ms) ? spelled : new Date(ms).toISOString();
}

/**
 * The participant key as the service computed it when this migration was written, frozen
 * here: a migration's result must not change when the live rule does (docs/architecture.md).
 * Null for a row whose object has neither `uuid` nor `id` (its key hashed the whole payload):
 * such a row keeps the key it has.
 */
export function participantKeyAsOf1766(envelope: {
  event: string;
  payload: unknown;
}): string | null {
  const object = record(record(envelope.payload).object);
  const uuid = text(object.uuid);
  const id = text(object.id);
  const own = uuid ? ['uuid', uuid] : id ? ['id', id] : null;
  if (!own) return null;
  const p = record(object.participant);
  const who = text(p.user_id) || text(p.participant_uuid) || text(p.id) || text(p.email) || '';
  const left = envelope.event.endsWith('_left');
  const when =
    left && text(p.leave_time) ? ['left', instant(p.leave_time)] : ['joined', instant(p.join_time)];
  const key = JSON.stringify([envelope.event, ...own, 'participant', who, ...when]);
  return key.length <= MAX_READABLE_KEY
    ? key
    : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * Participant events are now keyed on the participant's `user_id` and the join or leave time
 * (docs/reconciliation.md#identity), which the platform's participant reports carry too; they
 * were keyed on `participant_uuid`, which the reports lack. Stored events are re-keyed here, so
 * that a platform retry of one, or its reconciled twin, finds it and is not delivered again.
 *
 * Why re-key instead of looking both keys up at each ingest: a reconciled event cannot compute
 * the old key (it has no participant_uuid), so only rows under the new key can stop it.
 * Computed in TypeScript (not SQL of its own) by the rule of that day, frozen above; rows kept
 * as bytes only (no participant object) keep their key. Two old rows that now share a key (one
 * participant, one second, two participant_uuids) keep the first under the new key and the other
 * under its old one.
 */
export class ParticipantIdentityKeys1766000100001 implements MigrationInterface {
  name = 'ParticipantIdentityKeys1766000100001';

  async up(q: QueryRunner): Promise<void> {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = (await q.query(
        `SELECT id, payload FROM inbound_events
         WHERE event = ANY($1::text[]) AND id > $2
           AND jsonb_typeof(payload #> '{payload,object,participant}') = 'object'
         ORDER BY id LIMIT ${BATCH}`,
        [PARTICIPANT_EVENTS, after],
      )) as { id: string; payload: { event: string; payload: unknown } }[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      const keys = new Map<string, string>();
      const taken = new Set<string>();
      for (const row of rows) {
        const key = participantKeyAsOf1766(row.payload);
        if (key === null) continue;
        if (!taken.has(key)) keys.set(row.id, key);
        taken.add(key);
      }
      await q.query(
        `UPDATE inbound_events i SET identity_key = v.key
         FROM unnest($1::uuid[], $2::text[]) AS v(id, key)
         WHERE i.id = v.id AND i.identity_key <> v.key
           AND NOT EXISTS (SELECT 1 FROM inbound_events o WHERE o.identity_key = v.key)`,
        [[...keys.keys()], [...keys.values()]],
      );
    }
  }

  /**
   * Left as they are: the old keys cannot be told from the rows without the old key function.
   * After a revert, a platform retry of a participant event stored before may be delivered again.
   */
  async down(): Promise<void> {}
}
