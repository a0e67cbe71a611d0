import {
  AttendanceBuilder,
  OccurrenceInput,
  ParticipantInput,
  computeAttendance,
  participantKey,
} from './attendance';

const OCCURRENCE: OccurrenceInput = {
  id: '85746065432',
  uuid: '/ab+cd//ef==',
  topic: 'Training',
  host_id: 'h1',
  start_time: '2025-01-01T10:00:00Z',
  end_time: '2025-01-01T11:00:00Z',
  eventTs: null,
};

const person = {
  user_id: '16778240',
  participant_user_id: '',
  email: 'jill@example.com',
  user_name: 'Jill Chill',
  registrant_id: 'r1',
  customer_key: 'crm-7',
  participant_uuid: '55FF8A1B',
};

const at = (hhmmss: string) => `2025-01-01T${hhmmss}Z`;
const joined = (time: string, who: Partial<ParticipantInput> = {}): ParticipantInput => ({
  kind: 'joined',
  time: at(time),
  eventTs: null,
  ...person,
  ...who,
});
const left = (time: string, who: Partial<ParticipantInput> = {}): ParticipantInput => ({
  ...joined(time, who),
  kind: 'left',
});

/** Every order of a few inputs, to show the result does not depend on it. */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('computeAttendance', () => {
  it('gives a participant who joined and left one session, its duration and the occurrence', () => {
    const result = computeAttendance(OCCURRENCE, [joined('10:01:40'), left('10:31:40')]);
    expect(result).toEqual({
      id: '85746065432',
      uuid: '/ab+cd//ef==',
      topic: 'Training',
      host_id: 'h1',
      start_time: at('10:00:00'),
      end_time: at('11:00:00'),
      duration_seconds: 3600,
      participants_count: 1,
      participants: [
        {
          user_id: '16778240',
          user_name: 'Jill Chill',
          email: 'jill@example.com',
          registrant_id: 'r1',
          customer_key: 'crm-7',
          sessions: [{ join_time: at('10:01:40'), leave_time: at('10:31:40') }],
          first_join: at('10:01:40'),
          last_leave: at('10:31:40'),
          duration_seconds: 1800,
        },
      ],
    });
  });

  it('counts a redelivered join or leave once (the platform delivers at least once)', () => {
    const once = computeAttendance(OCCURRENCE, [joined('10:01:40'), left('10:31:40')]);
    const twice = computeAttendance(OCCURRENCE, [
      joined('10:01:40'),
      joined('10:01:40'),
      left('10:31:40'),
      left('10:31:40'),
      // The report's spelling of the same instant, from reconciliation.
      { ...left('10:31:40'), time: '2025-01-01T10:31:40.000Z' },
    ]);
    expect(twice).toEqual(once);
  });

  it('gives the same attendance whatever order the events came in', () => {
    const events = [
      joined('10:01:00'),
      left('10:10:00'),
      joined('10:20:00'),
      left('10:30:00'),
      joined('10:05:00', { user_id: '2', email: 'b@example.com' }),
    ];
    const expected = computeAttendance(OCCURRENCE, events);
    for (const order of permutations(events)) {
      expect(computeAttendance(OCCURRENCE, order)).toEqual(expected);
    }
    expect(expected.participants[0].sessions).toEqual([
      { join_time: at('10:01:00'), leave_time: at('10:10:00') },
      { join_time: at('10:20:00'), leave_time: at('10:30:00') },
    ]);
    expect(expected.participants[0].duration_seconds).toBe(1140);
  });

  it('takes a leave that arrives before its join (out of order) by their times', () => {
    const result = computeAttendance(OCCURRENCE, [left('10:31:40'), joined('10:01:40')]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:01:40'), leave_time: at('10:31:40') },
    ]);
  });

  it('keeps a rejoin as a second session, and a left redelivered after the rejoin does not end it', () => {
    // The forum's report: joined 10:00, left 10:10, joined 10:20, then the 10:10 left again
    // (a retry). Taken in arrival order it would close the second session before it began.
    const result = computeAttendance(OCCURRENCE, [
      joined('10:00:00'),
      left('10:10:00'),
      joined('10:20:00'),
      left('10:10:00'),
      left('10:40:00'),
    ]);
    expect(result.participants[0]).toMatchObject({
      sessions: [
        { join_time: at('10:00:00'), leave_time: at('10:10:00') },
        { join_time: at('10:20:00'), leave_time: at('10:40:00') },
      ],
      first_join: at('10:00:00'),
      last_leave: at('10:40:00'),
      duration_seconds: 1800,
    });
  });

  it('closes a session whose left never came at the end, marked open', () => {
    const result = computeAttendance(OCCURRENCE, [joined('10:30:00')]);
    expect(result.participants[0]).toMatchObject({
      sessions: [{ join_time: at('10:30:00'), leave_time: at('11:00:00'), open: true }],
      last_leave: at('11:00:00'),
      duration_seconds: 1800,
    });
  });

  it('counts each moment once where sessions overlap (a lost left, then a rejoin)', () => {
    // Joined 10:00 (its left lost), joined again 10:20 and left 10:40: the earliest open
    // session takes the leave, and the other stays open; 10:00 to 11:00 is counted once.
    const result = computeAttendance(OCCURRENCE, [
      joined('10:00:00'),
      joined('10:20:00'),
      left('10:40:00'),
    ]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:00:00'), leave_time: at('10:40:00') },
      { join_time: at('10:20:00'), leave_time: at('11:00:00'), open: true },
    ]);
    expect(result.participants[0].duration_seconds).toBe(3600);
  });

  it('starts a session whose join never came at the start, marked join_missing', () => {
    const result = computeAttendance(OCCURRENCE, [left('10:15:00')]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:00:00'), leave_time: at('10:15:00'), join_missing: true },
    ]);
    expect(result.participants[0].duration_seconds).toBe(900);
  });

  it('ends one session and starts the next at one instant (left and rejoined in the same second)', () => {
    const result = computeAttendance(OCCURRENCE, [
      joined('10:00:00'),
      left('10:10:00'),
      joined('10:10:00'),
      left('10:20:00'),
    ]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:00:00'), leave_time: at('10:10:00') },
      { join_time: at('10:10:00'), leave_time: at('10:20:00') },
    ]);
    expect(result.participants[0].duration_seconds).toBe(1200);
  });

  it('takes a join and a leave at the same instant as one session of no length', () => {
    const result = computeAttendance(OCCURRENCE, [left('10:10:00'), joined('10:10:00')]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:10:00'), leave_time: at('10:10:00') },
    ]);
    expect(result.participants[0].duration_seconds).toBe(0);
  });

  it('counts a leave after the end as the platform sent it (leaves trail the ended event)', () => {
    const result = computeAttendance(OCCURRENCE, [joined('10:50:00'), left('11:00:02')]);
    expect(result.participants[0]).toMatchObject({
      last_leave: at('11:00:02'),
      duration_seconds: 602,
    });
  });

  it('times a webinar leave sent without leave_time by its event_ts', () => {
    const result = computeAttendance(OCCURRENCE, [
      joined('10:00:00'),
      { ...left('10:00:00'), time: null, eventTs: Date.parse(at('10:05:00')) },
    ]);
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:00:00'), leave_time: at('10:05:00') },
    ]);
  });

  it('skips an event with no time at all, and counts it', () => {
    const builder = new AttendanceBuilder();
    builder.add({ ...joined('10:00:00'), time: 'not a time' });
    expect(builder.skipped).toBe(1);
    expect(builder.build(OCCURRENCE).participants_count).toBe(0);
  });

  describe('identity', () => {
    it('is user_id; where empty participant_user_id, else email, else user_name', () => {
      const blank = { user_id: '', participant_user_id: '', email: '', user_name: '' };
      expect(participantKey(joined('10:00:00'))).toBe('user_id:16778240');
      expect(participantKey(joined('10:00:00', { ...blank, participant_user_id: 'p' }))).toBe(
        'participant_user_id:p',
      );
      expect(participantKey(joined('10:00:00', { ...blank, email: 'e@x' }))).toBe('email:e@x');
      expect(participantKey(joined('10:00:00', { ...blank, user_name: 'Guest' }))).toBe(
        'user_name:Guest',
      );
      expect(participantKey(joined('10:00:00', { ...blank, user_id: null }))).toBe(
        'participant_uuid:55FF8A1B',
      );
    });

    it('keeps two participants with one display name apart by user_id', () => {
      const result = computeAttendance(OCCURRENCE, [
        joined('10:00:00', { user_id: '1', email: '', user_name: 'Guest' }),
        joined('10:05:00', { user_id: '2', email: '', user_name: 'Guest' }),
      ]);
      expect(result.participants_count).toBe(2);
      expect(result.participants.map((p) => p.user_id)).toEqual(['1', '2']);
    });

    it('takes each field from the earliest event that has it, whatever the order', () => {
      const events = [
        joined('10:00:00', { email: '', customer_key: '' }),
        left('10:10:00', {
          email: 'jill@example.com',
          user_name: 'Jill (phone)',
          customer_key: '',
        }),
        joined('10:20:00', { customer_key: 'crm-9' }),
      ];
      for (const order of permutations(events)) {
        expect(computeAttendance(OCCURRENCE, order).participants[0]).toMatchObject({
          user_name: 'Jill Chill',
          email: 'jill@example.com',
          customer_key: 'crm-9',
        });
      }
    });
  });

  it('keeps uuids with /, + and = as the platform wrote them', () => {
    for (const uuid of ['/ab+cd//ef==', 'a+b/c=', '//==']) {
      expect(computeAttendance({ ...OCCURRENCE, uuid }, []).uuid).toBe(uuid);
    }
  });

  it('orders participants by first join, and counts them', () => {
    const result = computeAttendance(OCCURRENCE, [
      joined('10:30:00', { user_id: 'late' }),
      joined('10:00:00', { user_id: 'early' }),
      left('10:40:00', { user_id: 'late' }),
    ]);
    expect(result.participants.map((p) => p.user_id)).toEqual(['early', 'late']);
    expect(result.participants_count).toBe(2);
  });

  it('takes the end from event_ts when the ended event has no end_time, and no start as unknown', () => {
    const result = computeAttendance(
      { ...OCCURRENCE, start_time: null, end_time: null, eventTs: Date.parse(at('11:00:00')) },
      [left('10:15:00')],
    );
    expect(result).toMatchObject({ start_time: null, end_time: at('11:00:00') });
    expect(result.duration_seconds).toBeNull();
    // With no start, a session whose join is missing starts at its leave.
    expect(result.participants[0].sessions).toEqual([
      { join_time: at('10:15:00'), leave_time: at('10:15:00'), join_missing: true },
    ]);
  });
});
