import Ajv2020 from 'ajv/dist/2020';
import { catalogChecker } from '../../test/support/event-schemas';
import { EVENT_TYPES } from './event-catalog';
import { SUBSCRIPTION_EVENTS } from './subscription-events';

const check = catalogChecker([...EVENT_TYPES]);
const SOURCE = { platform: 'zoom', event: 'meeting.started', event_ts: 1, account_id: 'acc' };
const MEETING = { id: '85746065432', uuid: 'u==', topic: 'T', host_id: 'h' };
const body = (event: string, data: object, source: object | null = SOURCE, extra = {}) =>
  JSON.stringify({
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    event,
    created_at: '2026-01-01T10:00:05.123Z',
    data,
    source,
    ...extra,
  });

describe('EVENT_TYPES', () => {
  it('lists the six kinds, webhook.test, the zoom.* family and the operational events, each described', () => {
    expect(EVENT_TYPES.map((t) => t.name)).toEqual([
      ...SUBSCRIPTION_EVENTS,
      'meeting.attendance',
      'webhook.test',
      'zoom.*',
      'bridge.webhook.disabled',
      'bridge.delivery.failed',
      'bridge.reconciliation.completed',
      'bridge.account.disconnected',
      'bridge.account.deauthorized',
    ]);
    for (const type of EVENT_TYPES) {
      expect(type.description.length).toBeGreaterThan(20);
      expect(type.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(new Ajv2020({ strict: true }).validateSchema(type.schema)).toBe(true);
    }
  });

  it('gives every kind an example body that its schema accepts', () => {
    for (const type of EVENT_TYPES) {
      expect(type.example).toBeDefined();
      expect([type.name, check(JSON.stringify(type.example))]).toEqual([type.name, []]);
    }
  });

  it('accepts the bodies the service sends', () => {
    expect(check(body('job.started', MEETING))).toEqual([]);
    expect(
      check(
        body(
          'follower.gained',
          { ...MEETING, type: 2, participant: { user_name: 'J', anything_new: { x: 1 } } },
          { ...SOURCE, tracking_id: null },
        ),
      ),
    ).toEqual([]);
    expect(
      check(
        body('operation.complete', {
          ...MEETING,
          files: [{ file_type: 'CC', download_url: 'https://bridge.example/api/x/download' }],
        }),
      ),
    ).toEqual([]);
    expect(check(body('operation.failed', { ...MEETING, error: 'gone' }))).toEqual([]);
    expect(
      check(
        body(
          'webhook.test',
          { webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', message: 'm' },
          null,
        ),
      ),
    ).toEqual([]);
    expect(
      check(body('zoom.meeting.created', { account_id: 'acc', object: { id: 1, new: true } })),
    ).toEqual([]);
  });

  it('accepts the attendance of its example, and refuses one without its revision', () => {
    const attendance = EVENT_TYPES.find((t) => t.name === 'meeting.attendance')!;
    const example = (attendance.schema.properties as Record<string, { examples: object[] }>).data
      .examples[0];
    const source = { ...SOURCE, event: 'meeting.ended', tracking_id: null, via: 'webhook' };
    expect(check(body('meeting.attendance', example, source))).toEqual([]);
    expect(
      check(body('meeting.attendance', { ...example, revision: undefined }, source)),
    ).not.toEqual([]);
  });

  it.each([
    ['an unknown envelope field', body('job.started', MEETING, SOURCE, { extra: 1 })],
    ['a missing meeting id', body('job.started', { uuid: 'u', topic: 't', host_id: 'h' })],
    ['a numeric meeting id', body('job.started', { ...MEETING, id: 85746065432 })],
    ['a field the service does not send', body('job.completed', { ...MEETING, password: 'x' })],
    ['a follower without participant or registrant', body('follower.lost', MEETING)],
    [
      'a follower with both',
      body('follower.lost', { ...MEETING, participant: {}, registrant: {} }),
    ],
    ['operation.complete without files', body('operation.complete', MEETING)],
    [
      'a file without a download_url',
      body('operation.complete', { ...MEETING, files: [{ file_type: 'MP4' }] }),
    ],
    [
      'a test event with a source',
      body('webhook.test', { webhook_id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', message: 'm' }),
    ],
    ['a bad created_at', body('job.started', MEETING, SOURCE, { created_at: 'yesterday' })],
    ['a source of another platform', body('job.started', MEETING, { ...SOURCE, platform: 'x' })],
    ['a platform event name out of pattern', body('zoom.Meeting', {})],
    ['an unknown kind', body('job.exploded', MEETING)],
  ])('rejects %s', (_what, raw) => {
    expect(check(raw)).not.toEqual([]);
  });
});
