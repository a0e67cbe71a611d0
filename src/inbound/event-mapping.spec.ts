import {
  meetingEnded,
  meetingStarted,
  participantJoined,
  participantLeft,
  registrationCancelled,
  registrationCreated,
} from '../../scripts/platform/zoom-events';
import { SUBSCRIPTION_EVENTS } from '../webhooks/subscription-events';
import {
  EVENT_MAPPING,
  approvalStep,
  gainingEventsOf,
  mappingRuleOf,
  unmappableReason,
} from './event-mapping';

const UUID = '4444AAAiAAAAAiAiAiiAii==';
const MEETING = {
  id: '85746065432',
  uuid: UUID,
  topic: 'Bridge test',
  host_id: 'x1yCzABCDEfg23HiJKl4mN',
  type: 8,
  duration: 30,
  timezone: 'Europe/Berlin',
  start_time: '2025-01-01T10:00:05Z',
};

function dataOf(event: { event: string; payload: Record<string, unknown> }) {
  const route = mappingRuleOf(event.event);
  if (!route || !('kind' in route)) throw new Error(`${event.event} is not published directly`);
  return { kind: route.kind, data: route.data(event.payload.object as Record<string, unknown>) };
}

describe('EVENT_MAPPING', () => {
  it('covers docs/api.md#platform-events-post-zoomevents: every platform event listed there, onto valid subscription kinds', () => {
    const byKind: Record<string, string[]> = {};
    for (const [event, route] of Object.entries(EVENT_MAPPING)) {
      const kind = 'kind' in route ? route.kind : 'operation.*';
      (byKind[kind] ??= []).push(event);
      if ('kind' in route) expect(SUBSCRIPTION_EVENTS).toContain(route.kind);
    }
    for (const list of Object.values(byKind)) list.sort();
    expect(byKind).toEqual({
      'job.started': ['meeting.started', 'webinar.started'],
      'job.completed': ['meeting.ended', 'webinar.ended'],
      'follower.gained': [
        'meeting.participant_joined',
        'meeting.registration_approved',
        'meeting.registration_created',
        'webinar.participant_joined',
        'webinar.registration_approved',
        'webinar.registration_created',
      ],
      'follower.lost': [
        'meeting.participant_left',
        'meeting.registration_cancelled',
        'meeting.registration_denied',
        'webinar.participant_left',
        'webinar.registration_cancelled',
        'webinar.registration_denied',
      ],
      'operation.*': ['recording.completed', 'recording.transcript_completed'],
    });
  });

  it('does not map other events, nor inherited property names', () => {
    expect(mappingRuleOf('meeting.updated')).toBeNull();
    expect(mappingRuleOf('constructor')).toBeNull();
    expect(mappingRuleOf('__proto__')).toBeNull();
  });

  it('builds job.started / job.completed data with the id as a string', () => {
    expect(dataOf(meetingStarted(UUID))).toEqual({ kind: 'job.started', data: MEETING });
    expect(dataOf(meetingEnded(UUID))).toEqual({
      kind: 'job.completed',
      data: { ...MEETING, end_time: '2025-01-01T10:30:05Z' },
    });
  });

  it('builds follower data with the participant as the platform sent it', () => {
    const joined = participantJoined(UUID, 1);
    const participant = (joined.payload.object as { participant: Record<string, unknown> })
      .participant;
    Object.assign(participant, { customer_key: 'crm-349', phone_number: '+18001234567' });
    expect(dataOf(joined)).toEqual({
      kind: 'follower.gained',
      data: {
        ...MEETING,
        participant: {
          id: '',
          user_id: '16778241',
          participant_uuid: '55FF8A1B-0000-4E3F-9D1B-000000000001',
          participant_user_id: '',
          registrant_id: 'abcdefghij0-klmnopq23456',
          user_name: 'Jill Chill 1',
          email: 'jchill1@example.com',
          join_time: '2025-01-01T10:01:40Z',
          customer_key: 'crm-349',
          phone_number: '+18001234567',
        },
      },
    });
    const left = dataOf(participantLeft(UUID, 2));
    expect(left.kind).toBe('follower.lost');
    expect(left.data.participant).toMatchObject({
      user_id: '16778242',
      leave_time: '2025-01-01T10:20:00Z',
      leave_reason: expect.stringContaining('left the meeting'),
    });
  });

  it('builds follower data with the registrant as sent, occurrences, a numeric id as a string', () => {
    const event = registrationCreated(UUID, 1);
    const object = event.payload.object as Record<string, unknown>;
    object.occurrences = [{ occurrence_id: '1735725600000', start_time: '2025-01-01T10:00:00Z' }];
    const created = dataOf(event);
    expect(created).toEqual({
      kind: 'follower.gained',
      data: {
        ...MEETING,
        occurrences: object.occurrences,
        registrant: object.registrant,
      },
    });
    expect(created.data.registrant).not.toBe(object.registrant);
    expect(dataOf(registrationCancelled(UUID, 1)).kind).toBe('follower.lost');
  });

  it('names the events of the same family that can gain a registrant', () => {
    expect(gainingEventsOf('webinar.registration_denied').sort()).toEqual([
      'webinar.registration_approved',
      'webinar.registration_created',
    ]);
    expect(gainingEventsOf('meeting.registration_cancelled').sort()).toEqual([
      'meeting.registration_approved',
      'meeting.registration_created',
    ]);
  });

  describe('approvalStep (docs/api.md#platform-events-post-zoomevents registration approval)', () => {
    const object = (status?: string, occurrences?: string[]) => ({
      id: 85746065432,
      uuid: UUID,
      registrant: { id: 'r1', email: 'a@example.com', ...(status ? { status } : {}) },
      ...(occurrences ? { occurrences: occurrences.map((id) => ({ occurrence_id: id })) } : {}),
    });

    it('gains an approved registrant, or one without a status, at once', () => {
      const approved = approvalStep('created', object('approved'), 'acct');
      expect(approved).toEqual({ key: expect.stringMatching(/^registrant:follower\.gained:/) });
      expect(approvalStep('created', object(), 'acct')).toEqual(approved);
    });

    it('gains nobody for a pending or denied registration until it is approved', () => {
      expect(approvalStep('created', object('pending'), 'acct')).toBeNull();
      expect(approvalStep('created', object('denied'), 'acct')).toBeNull();
      // The approval gains the registrant under the same key as an approved registration would.
      expect(approvalStep('approved', object('approved'), 'acct')).toEqual(
        approvalStep('created', object('approved'), 'acct'),
      );
    });

    it('loses a registrant only after its gain, under a key of its own', () => {
      const gained = approvalStep('created', object(), 'acct')!;
      expect(approvalStep('withdrawn', object(), 'acct')).toEqual({
        key: expect.stringMatching(/^registrant:follower\.lost:/),
        onlyAfter: gained.key,
      });
    });

    it('keys per meeting, registrant and occurrences, whatever their order', () => {
      const keyOf = (o: ReturnType<typeof object>) => approvalStep('approved', o, 'acct')!.key;
      const base = keyOf(object());
      expect(keyOf({ ...object(), id: 1 })).not.toBe(base);
      expect(keyOf({ ...object(), registrant: { id: 'r2', email: 'a@example.com' } })).not.toBe(
        base,
      );
      expect(keyOf(object(undefined, ['b', 'a']))).toBe(keyOf(object(undefined, ['a', 'b'])));
      expect(keyOf(object(undefined, ['a']))).not.toBe(keyOf(object(undefined, ['b'])));
      expect(keyOf(object(undefined, ['a']))).not.toBe(base);
    });
  });

  it('builds data from a sparse object without throwing', () => {
    const route = mappingRuleOf('meeting.participant_joined');
    if (!route || !('kind' in route)) throw new Error('mapped');
    expect(route.data({ participant: 'garbage', id: { nested: true } })).toEqual({
      id: null,
      uuid: null,
      topic: null,
      host_id: null,
      participant: {},
    });
  });
});

describe('unmappableReason', () => {
  const route = (event: string) => mappingRuleOf(event)!;
  it('names what the event lacks, or null when it can be mapped', () => {
    expect(unmappableReason(route('meeting.started'), { object: { uuid: 'u' } })).toBeNull();
    expect(unmappableReason(route('meeting.started'), { object: null })).toBe(
      'payload.object is not an object',
    );
    expect(unmappableReason(route('meeting.ended'), { object: { topic: 'x' } })).toBe(
      'payload.object has neither a uuid nor an id',
    );
    expect(
      unmappableReason(route('meeting.participant_joined'), {
        object: { id: 1, participant: null },
      }),
    ).toBe('payload.object.participant is not an object');
    expect(
      unmappableReason(route('meeting.registration_created'), {
        object: { id: 1, registrant: [] },
      }),
    ).toBe('payload.object.registrant is not an object');
    expect(unmappableReason(route('recording.completed'), { object: { id: 1 } })).toBeNull();
    expect(unmappableReason(route('recording.completed'), 'not even an object')).toBe(
      'payload.object is not an object',
    );
  });
});
