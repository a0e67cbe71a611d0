import { MigrationInterface, QueryRunner } from 'typeorm';
import { dedupeKey } from '../../inbound/dedupe-key';
import { PlatformEnvelope } from '../../inbound/platform-envelope';

const PARTICIPANT_EVENTS = [
  'meeting.participant_joined',
  'meeting.participant_left',
  'webinar.participant_joined',
  'webinar.participant_left',
];
const BATCH = 1000;

/**
 * Participant events are now keyed on the participant's `user_id` and the join or leave time
 * (docs/reconciliation.md#identity), which the platform's participant reports carry too; they
 * were keyed on `participant_uuid`, which the reports lack. Stored events are re-keyed here, so
 * that a platform retry of one, or its reconciled twin, finds it and is not delivered again.
 *
 * Why re-key instead of looking both keys up at each ingest: a reconciled event cannot compute
 * the old key (it has no participant_uuid), so only rows under the new key can stop it.
 * Computed with the key function itself (not SQL of its own) so the two cannot differ; rows kept
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
      )) as { id: string; payload: PlatformEnvelope }[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1].id;
      const keys = new Map<string, string>();
      const taken = new Set<string>();
      for (const row of rows) {
        const key = dedupeKey(row.payload);
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
