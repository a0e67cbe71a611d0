import {
  meetingStarted,
  meetingUpdated,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCancelled,
  registrationCreated,
} from '../../../test/fixtures/zoom-events';
import { identityKey } from './event-identity';

const UUID = '4444AAAiAAAAAiAiAiiAii==';

describe('identityKey', () => {
  it('is event + uuid for meeting events, whatever else the body says', () => {
    const a = meetingStarted(UUID, 1);
    const b = meetingStarted(UUID, 2);
    (b.payload.object as Record<string, unknown>).topic = 'changed';
    expect(identityKey(a)).toBe(JSON.stringify(['meeting.started', 'uuid', UUID]));
    expect(identityKey(b)).toBe(identityKey(a));
    expect(identityKey({ ...a, event: 'meeting.ended' })).not.toBe(identityKey(a));
  });

  it('ignores the download URLs and tokens that differ between recording redeliveries', () => {
    const first = recordingCompleted(UUID, 'token-1');
    const again = recordingCompleted(UUID, 'token-2');
    const files = (again.payload.object as { recording_files: { download_url: string }[] })
      .recording_files;
    files.forEach((f) => (f.download_url += '?changed=1'));
    expect(identityKey(again)).toBe(identityKey(first));
  });

  it('tells participants apart, and one participant joining twice', () => {
    const keys = new Set([
      identityKey(participantJoined(UUID, 1)),
      identityKey(participantJoined(UUID, 2)),
      identityKey(participantJoined(UUID, 1, '2025-01-01T10:15:00Z')),
      identityKey(participantLeft(UUID, 1)),
    ]);
    expect(keys.size).toBe(4);
    expect(identityKey(participantJoined(UUID, 1))).toBe(
      JSON.stringify([
        'meeting.participant_joined',
        'uuid',
        UUID,
        'participant',
        '55FF8A1B-0000-4E3F-9D1B-000000000001',
        'at',
        '2025-01-01T10:01:40Z',
      ]),
    );
  });

  it('falls back to user_id when the participant has no participant_uuid', () => {
    const event = participantJoined(UUID, 3);
    const p = (event.payload.object as { participant: Record<string, unknown> }).participant;
    delete p.participant_uuid;
    expect(identityKey(event)).toContain('"participant","16778243"');
  });

  it('tells registrants apart', () => {
    expect(identityKey(registrationCreated(UUID, 1))).not.toBe(
      identityKey(registrationCreated(UUID, 2)),
    );
    expect(identityKey(registrationCancelled(UUID, 1))).toContain('9tboDiHUQAeOnbmudzWa01');
  });

  it('uses object.id when there is no uuid, treating a number and its string alike', () => {
    const asNumber = meetingStarted(UUID);
    const asString = meetingStarted(UUID);
    for (const [event, id] of [
      [asNumber, 85746065432],
      [asString, '85746065432'],
    ] as const) {
      const object = event.payload.object as Record<string, unknown>;
      delete object.uuid;
      object.id = id;
    }
    expect(identityKey(asNumber)).toBe(identityKey(asString));
    expect(identityKey(asNumber)).toBe(JSON.stringify(['meeting.started', 'id', '85746065432']));
  });

  it('keeps each occurrence of an unmapped event that recurs for one object', () => {
    const first = meetingUpdated();
    const second = { ...meetingUpdated(), event_ts: first.event_ts + 60000 };
    expect(identityKey(first)).not.toBe(identityKey(second));
    expect(identityKey(meetingUpdated(85746065432))).toBe(identityKey(first));
  });

  it('falls back to event_ts and a payload hash when the object has no identity', () => {
    const a = { event: 'account.updated', event_ts: 1, payload: { account_id: 'x', object: {} } };
    expect(identityKey(a)).toBe(identityKey(structuredClone(a)));
    expect(identityKey(a)).not.toBe(
      identityKey({ ...a, payload: { account_id: 'y', object: {} } }),
    );
  });

  it('hashes keys too long for a btree index', () => {
    const key = identityKey(meetingStarted('u'.repeat(5000)));
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
