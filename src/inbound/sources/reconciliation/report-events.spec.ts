import { participantJoined, participantLeft } from '../../../../scripts/platform/zoom-events';
import { dedupeKey } from '../../dedupe-key';
import {
  durationMinutes,
  meetingEvents,
  participantEvents,
  recordingEvent,
  rowMark,
} from './report-events';

const WINDOW = {
  since: Date.parse('2025-01-01T00:00:00Z'),
  until: Date.parse('2025-01-02T00:00:00Z'),
};
const UUID = '/abc//def==';
const MEETING = {
  uuid: UUID,
  id: 85746065432,
  topic: 'Bridge test',
  host: 'Jill',
  start_time: '2025-01-01T10:00:05Z',
  end_time: '2025-01-01T10:30:05Z',
  duration: '00:30:00',
  has_recording: true,
};

describe('report events', () => {
  it('reads the dashboard duration as the webhook has it, in minutes', () => {
    expect(durationMinutes('00:56')).toBe(1);
    expect(durationMinutes('16:08')).toBe(16);
    expect(durationMinutes('01:30:00')).toBe(90);
    expect(durationMinutes(30)).toBe(30);
    expect(durationMinutes('soon')).toBeNull();
  });

  it('gives started and ended in the webhook shape, id a string, only for times in the window', () => {
    const events = meetingEvents('meeting', MEETING, 'acct', WINDOW);
    expect(events).toEqual([
      {
        event: 'meeting.started',
        event_ts: Date.parse('2025-01-01T10:00:05Z'),
        payload: {
          account_id: 'acct',
          object: {
            id: '85746065432',
            uuid: UUID,
            topic: 'Bridge test',
            start_time: '2025-01-01T10:00:05Z',
            duration: 30,
          },
        },
      },
      expect.objectContaining({
        event: 'meeting.ended',
        event_ts: Date.parse('2025-01-01T10:30:05Z'),
      }),
    ]);
    const late = { since: Date.parse('2025-01-01T10:10:00Z'), until: WINDOW.until };
    expect(meetingEvents('webinar', MEETING, 'acct', late).map((e) => e.event)).toEqual([
      'webinar.ended',
    ]);
  });

  it('keys a participant row as the webhook of the same join and leave is keyed', () => {
    const joined = participantJoined(UUID, 3, '2025-01-01T10:01:40Z');
    const left = participantLeft(UUID, 3, '2025-01-01T10:20:00Z');
    const p = (joined.payload.object as { participant: Record<string, unknown> }).participant;
    const row = {
      user_id: p.user_id,
      user_name: p.user_name,
      id: p.id,
      email: p.email,
      join_time: '2025-01-01T10:01:40Z',
      leave_time: '2025-01-01T10:20:00Z',
      leave_reason: 'left',
      ip_address: '192.0.2.1',
    };
    const events = participantEvents('meeting', MEETING, row, 'acct', WINDOW);
    expect(events.map((e) => e.event)).toEqual([
      'meeting.participant_joined',
      'meeting.participant_left',
    ]);
    expect(events.map((e) => dedupeKey(e))).toEqual([dedupeKey(joined), dedupeKey(left)]);
    // What the webhook's participant has not (the report's device data) is not invented into it.
    expect(
      (events[0].payload.object.participant as Record<string, unknown>).ip_address,
    ).toBeUndefined();
  });

  it('gives recording.completed once every file is completed, at the end of the last', () => {
    const recording = {
      uuid: UUID,
      id: 85746065432,
      host_id: 'h',
      recording_files: [
        { id: 'f1', file_type: 'MP4', status: 'completed', recording_end: '2025-01-01T10:30:00Z' },
        { file_type: 'CC', status: 'completed', recording_end: '2025-01-01T10:31:00Z' },
      ],
    };
    expect(recordingEvent(recording, 'acct')).toMatchObject({
      event: 'recording.completed',
      event_ts: Date.parse('2025-01-01T10:31:00Z'),
      payload: { account_id: 'acct', object: { uuid: UUID, host_id: 'h' } },
    });
    recording.recording_files[1].status = 'processing';
    expect(recordingEvent(recording, 'acct')).toBeNull();
  });

  it('finds the end of the last of 200,000 files without spreading them into a call', () => {
    const files = Array.from({ length: 200_000 }, (_, i) => ({
      id: `f${i}`,
      recording_end: i === 123_456 ? '2025-01-01T11:00:00Z' : '2025-01-01T10:30:00Z',
    }));
    expect(recordingEvent({ uuid: UUID, recording_files: files }, 'acct')?.event_ts).toBe(
      Date.parse('2025-01-01T11:00:00Z'),
    );
  });

  it('takes only text, numbers and booleans from a row: a value of any depth is left out', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const row = {
      user_id: { nested: true },
      user_name: deep,
      email: 'a@example.com',
      join_time: '2025-01-01T10:01:40Z',
    };
    const [joined] = participantEvents('meeting', { ...MEETING, topic: deep }, row, 'acct', WINDOW);
    expect(joined.payload.object).not.toHaveProperty('topic');
    expect(joined.payload.object.participant).toEqual({
      email: 'a@example.com',
      join_time: '2025-01-01T10:01:40Z',
    });
    expect(() => JSON.stringify(joined)).not.toThrow();
  });

  it('marks a row by what a later read gives again, telling apart rows that differ', () => {
    const row = { join_time: '2025-01-01T10:01:40Z', device: 'Phone', status: 'in_meeting' };
    expect(rowMark(row)).toBe(rowMark({ ...row, status: 'left', leave_time: 'later' }));
    expect(rowMark(row)).not.toBe(rowMark({ ...row, device: 'Windows' }));
    expect(rowMark(row)).not.toBe(rowMark({ ...row, join_time: '2025-01-01T10:01:41Z' }));
    expect(rowMark({ ...row, device: [[['deep']]] })).toBe(rowMark({ ...row, device: undefined }));
  });

  it('keys participants named by user_name alone apart (no user_id, id nor email)', () => {
    const at = { join_time: '2025-01-01T10:01:40Z' };
    const [a] = participantEvents('meeting', MEETING, { ...at, user_name: 'A' }, 'acct', WINDOW);
    const [b] = participantEvents('meeting', MEETING, { ...at, user_name: 'B' }, 'acct', WINDOW);
    expect(dedupeKey(a)).not.toBe(dedupeKey(b));
  });
});
