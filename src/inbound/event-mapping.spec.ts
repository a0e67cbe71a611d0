import {
  meetingEnded,
  meetingStarted,
  participantJoined,
  participantLeft,
  registrationCancelled,
  registrationCreated,
} from '../../scripts/platform/zoom-events';
import { SUBSCRIPTION_EVENTS } from '../webhooks/subscription-events';
import { EVENT_MAPPING, routeOf } from './event-mapping';

const UUID = '4444AAAiAAAAAiAiAiiAii==';
const MEETING = {
  id: '85746065432',
  uuid: UUID,
  topic: 'Bridge test – Réunion ☕',
  host_id: 'x1yCzABCDEfg23HiJKl4mN',
  start_time: '2025-01-01T10:00:05Z',
};

function dataOf(event: { event: string; payload: Record<string, unknown> }) {
  const route = routeOf(event.event);
  if (!route || !('kind' in route)) throw new Error(`${event.event} is not published directly`);
  return { kind: route.kind, data: route.data(event.payload.object as Record<string, unknown>) };
}

describe('EVENT_MAPPING', () => {
  it('covers SPEC §5: every platform event listed there, onto valid subscription kinds', () => {
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
        'meeting.registration_created',
        'webinar.participant_joined',
        'webinar.registration_created',
      ],
      'follower.lost': [
        'meeting.participant_left',
        'meeting.registration_cancelled',
        'webinar.participant_left',
        'webinar.registration_cancelled',
      ],
      'operation.*': ['recording.completed', 'recording.transcript_completed'],
    });
  });

  it('does not map other events, nor inherited property names', () => {
    expect(routeOf('meeting.updated')).toBeNull();
    expect(routeOf('constructor')).toBeNull();
    expect(routeOf('__proto__')).toBeNull();
  });

  it('builds job.started / job.completed data with the id as a string', () => {
    expect(dataOf(meetingStarted(UUID))).toEqual({ kind: 'job.started', data: MEETING });
    expect(dataOf(meetingEnded(UUID))).toEqual({
      kind: 'job.completed',
      data: { ...MEETING, end_time: '2025-01-01T10:30:05Z' },
    });
  });

  it('builds follower data with the participant', () => {
    expect(dataOf(participantJoined(UUID, 1))).toEqual({
      kind: 'follower.gained',
      data: {
        ...MEETING,
        participant: {
          id: '',
          user_id: '16778241',
          participant_uuid: '55FF8A1B-0000-4E3F-9D1B-000000000001',
          participant_user_id: '',
          user_name: 'Jill Chill 1',
          email: 'jchill1@example.com',
          join_time: '2025-01-01T10:01:40Z',
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

  it('builds follower data with the registrant, a numeric meeting id as a string, no join_url', () => {
    const created = dataOf(registrationCreated(UUID, 1));
    expect(created).toEqual({
      kind: 'follower.gained',
      data: {
        ...MEETING,
        registrant: {
          id: '9tboDiHUQAeOnbmudzWa01',
          email: 'jchill1@example.com',
          first_name: 'Jill',
          last_name: 'Chill 1',
          status: 'approved',
        },
      },
    });
    expect(JSON.stringify(created)).not.toContain('join_url');
    expect(dataOf(registrationCancelled(UUID, 1)).kind).toBe('follower.lost');
  });

  it('builds data from a sparse object without throwing', () => {
    const route = routeOf('meeting.participant_joined');
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
