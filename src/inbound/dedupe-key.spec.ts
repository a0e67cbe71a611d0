import {
  meetingStarted,
  meetingUpdated,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCancelled,
  registrationCreated,
} from '../../scripts/platform/zoom-events';
import { dedupeKey } from './dedupe-key';
import type { PlatformEnvelope } from './platform-envelope';

const UUID = '4444AAAiAAAAAiAiAiiAii==';

describe('dedupeKey', () => {
  it('is event + uuid for meeting events, whatever else the body says', () => {
    const a = meetingStarted(UUID, 1);
    const b = meetingStarted(UUID, 2);
    (b.payload.object as Record<string, unknown>).topic = 'changed';
    expect(dedupeKey(a)).toBe(JSON.stringify(['meeting.started', 'uuid', UUID]));
    expect(dedupeKey(b)).toBe(dedupeKey(a));
    expect(dedupeKey({ ...a, event: 'meeting.ended' })).not.toBe(dedupeKey(a));
  });

  it('ignores the download URLs and tokens that differ between recording redeliveries', () => {
    const first = recordingCompleted(UUID, 'token-1');
    const again = recordingCompleted(UUID, 'token-2');
    const files = (again.payload.object as { recording_files: { download_url: string }[] })
      .recording_files;
    files.forEach((f) => (f.download_url += '?changed=1'));
    expect(dedupeKey(again)).toBe(dedupeKey(first));
  });

  it('tells participants apart, and one participant joining twice', () => {
    const keys = new Set([
      dedupeKey(participantJoined(UUID, 1)),
      dedupeKey(participantJoined(UUID, 2)),
      dedupeKey(participantJoined(UUID, 1, '2025-01-01T10:15:00Z')),
      dedupeKey(participantLeft(UUID, 1)),
    ]);
    expect(keys.size).toBe(4);
    expect(dedupeKey(participantJoined(UUID, 1))).toBe(
      JSON.stringify([
        'meeting.participant_joined',
        'uuid',
        UUID,
        'participant',
        '16778241',
        'joined',
        '2025-01-01T10:01:40.000Z',
      ]),
    );
  });

  it('keys a participant on what the platform reports carry too: user_id and the time', () => {
    // The participant report has no participant_uuid, and may spell the time with fractions.
    const fromReport = participantJoined(UUID, 1, '2025-01-01T10:01:40.000Z');
    const p = (fromReport.payload.object as { participant: Record<string, unknown> }).participant;
    delete p.participant_uuid;
    expect(dedupeKey(fromReport)).toBe(dedupeKey(participantJoined(UUID, 1)));
    // The leave is keyed on its own time, whether the join time came with it or not.
    const left = participantLeft(UUID, 1, '2025-01-01T10:20:00Z');
    const reportLeft = participantLeft(UUID, 1, '2025-01-01T10:20:00Z');
    const q = (reportLeft.payload.object as { participant: Record<string, unknown> }).participant;
    delete q.participant_uuid;
    q.join_time = '2025-01-01T09:00:00Z';
    expect(dedupeKey(reportLeft)).toBe(dedupeKey(left));
  });

  it('tells one participant leaving twice apart, by leave time or else by the join it ends', () => {
    expect(dedupeKey(participantLeft(UUID, 1, '2025-01-01T10:20:00Z'))).not.toBe(
      dedupeKey(participantLeft(UUID, 1, '2025-01-01T10:40:00Z')),
    );
    // Webinar leaves may come without leave_time: the join time still tells them apart.
    const leave = (joinTime: string) => {
      const event = participantLeft(UUID, 1);
      const p = (event.payload.object as { participant: Record<string, unknown> }).participant;
      delete p.leave_time;
      p.join_time = joinTime;
      return dedupeKey(event);
    };
    expect(leave('2025-01-01T10:01:00Z')).not.toBe(leave('2025-01-01T10:30:00Z'));
    expect(leave('2025-01-01T10:01:00Z')).toBe(leave('2025-01-01T10:01:00Z'));
  });

  it('tells the registrations of one registrant for different occurrences apart', () => {
    const forOccurrences = (...ids: string[]) => {
      const event = registrationCreated(UUID, 1);
      (event.payload.object as Record<string, unknown>).occurrences = ids.map((id) => ({
        occurrence_id: id,
        start_time: '2025-01-01T10:00:00Z',
      }));
      return dedupeKey(event);
    };
    expect(forOccurrences('1735725600000')).not.toBe(forOccurrences('1736330400000'));
    expect(forOccurrences('b', 'a')).toBe(forOccurrences('a', 'b'));
    // The sample's one occurrence.
    expect(forOccurrences('1735725600000')).toBe(dedupeKey(registrationCreated(UUID, 1)));
  });

  it('keeps a second recording.completed for the same meeting that brings new files', () => {
    const first = recordingCompleted(UUID);
    const second = recordingCompleted(UUID);
    const files = (second.payload.object as { recording_files: Record<string, unknown>[] })
      .recording_files;
    files.forEach((f, i) => f.id && (f.id = `restarted-${i}`));
    expect(dedupeKey(second)).not.toBe(dedupeKey(first));
  });

  it('falls back to participant_uuid when the participant has no user_id', () => {
    const event = participantJoined(UUID, 3);
    const p = (event.payload.object as { participant: Record<string, unknown> }).participant;
    delete p.user_id;
    expect(dedupeKey(event)).toContain('"participant","55FF8A1B-0000-4E3F-9D1B-000000000003"');
  });

  it('tells registrants apart', () => {
    expect(dedupeKey(registrationCreated(UUID, 1))).not.toBe(
      dedupeKey(registrationCreated(UUID, 2)),
    );
    expect(dedupeKey(registrationCancelled(UUID, 1))).toContain('abcdefghij0-klmnopq23401');
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
    expect(dedupeKey(asNumber)).toBe(dedupeKey(asString));
    expect(dedupeKey(asNumber)).toBe(JSON.stringify(['meeting.started', 'id', '85746065432']));
  });

  it('keeps each occurrence of an unmapped event that recurs for one object', () => {
    const first = meetingUpdated();
    const second = { ...meetingUpdated(), event_ts: first.event_ts + 60000 };
    expect(dedupeKey(first)).not.toBe(dedupeKey(second));
    expect(dedupeKey(meetingUpdated(85746065432))).toBe(dedupeKey(first));
  });

  it('falls back to event_ts and a payload hash when the object has no identity', () => {
    const a = { event: 'account.updated', event_ts: 1, payload: { account_id: 'x', object: {} } };
    expect(dedupeKey(a)).toBe(dedupeKey(structuredClone(a)));
    expect(dedupeKey(a)).not.toBe(dedupeKey({ ...a, payload: { account_id: 'y', object: {} } }));
  });

  it.each([undefined, null, 'text', [1, 2], 42])(
    'keys an event whose payload is %p, never throwing',
    (payload) => {
      const event = { event: 'meeting.started', event_ts: 7, payload };
      expect(dedupeKey(event)).toBe(dedupeKey(structuredClone(event)));
      expect(dedupeKey(event)).not.toBe(dedupeKey({ ...event, event_ts: 8 }));
    },
  );

  it('tells a payload left out from a null one', () => {
    const absent = { event: 'meeting.started', event_ts: 7 } as PlatformEnvelope;
    expect(dedupeKey(absent)).not.toBe(dedupeKey({ ...absent, payload: null }));
  });

  it('hashes keys too long for a btree index', () => {
    const key = dedupeKey(meetingStarted('u'.repeat(5000)));
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
