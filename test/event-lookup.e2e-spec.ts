import { randomUUID } from 'node:crypto';
import { meetingEnded, meetingStarted } from '../scripts/platform/zoom-events';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { ClientName, TestApp, scopesOfBut, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { TestWebhook, createWebhook } from './support/webhooks';
import { sendTracked } from './support/zoom-sender';

describe('event lookup (docs/operations.md: GET /api/events, GET /api/events/:id)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let alphaStarted: TestWebhook;
  let alphaStartedPath: string;
  let alphaEnded: TestWebhook;
  let betaStarted: TestWebhook;
  let started: { trackingId: string; uuid: string };
  let ended: { trackingId: string; uuid: string };
  const tokens = new Map<string, string>();

  const api = async (client: ClientName, path: string) => {
    tokens.set(client, tokens.get(client) ?? (await t.token(client)));
    return request(t.baseUrl, 'GET', path, { token: tokens.get(client) });
  };
  const eventIdOf = async (client: ClientName, trackingId: string): Promise<string> => {
    const res = await api(client, `/api/events?tracking_id=${encodeURIComponent(trackingId)}`);
    return (res.body.data as Json[])[0]?.id as string;
  };

  beforeAll(async () => {
    // A generous attempt deadline: on a loaded machine each delivery still takes one attempt.
    t = await startTestApp({ env: { DELIVERY_TIMEOUT_MS: '10000' } });
    receiver = await startReceiver();
    const alphaRoute = receiver.route({}, 'alpha-started');
    alphaStartedPath = alphaRoute.path;
    alphaStarted = await createWebhook(t, {
      url: alphaRoute.url,
      events: ['job.started'],
    });
    alphaEnded = await createWebhook(t, {
      url: receiver.route({}, 'alpha-ended').url,
      events: ['job.completed'],
    });
    betaStarted = await createWebhook(t, {
      url: receiver.route({}, 'beta-started').url,
      events: ['job.started'],
      client: 'beta',
    });
    started = { uuid: `lookup-${randomUUID()}`, trackingId: '' };
    started.trackingId = await sendTracked(t.baseUrl, meetingStarted(started.uuid));
    ended = { uuid: started.uuid, trackingId: '' };
    ended.trackingId = await sendTracked(t.baseUrl, meetingEnded(ended.uuid));
    await waitFor(() => receiver.received.length === 3, { what: 'three deliveries' });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('finds the event by its platform tracking id, as its notifications carry it', async () => {
    const res = await api(
      'alpha',
      `/api/events?tracking_id=${encodeURIComponent(started.trackingId)}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: [
        {
          id: expect.any(String),
          event: 'job.started',
          created_at: expect.stringMatching(/Z$/),
          data: expect.objectContaining({ uuid: started.uuid }),
          source: expect.objectContaining({
            platform: 'zoom',
            event: 'meeting.started',
            tracking_id: started.trackingId,
          }),
        },
      ],
      next_cursor: null,
    });
    const [delivered] = receiver.requests(alphaStartedPath);
    expect(res.body.data[0].id).toBe(JSON.parse(delivered.body.toString()).id);
  });

  it("shows an event with only the caller's own deliveries", async () => {
    const id = await eventIdOf('alpha', started.trackingId);
    const detail = await waitFor(async () => {
      const res = await api('alpha', `/api/events/${id}`);
      return res.body.deliveries?.[0]?.status === 'succeeded' && res;
    });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id, event: 'job.started', data: { uuid: started.uuid } });
    expect(detail.body.deliveries).toEqual([
      {
        id: expect.any(String),
        webhook_id: alphaStarted.id,
        status: 'succeeded',
        attempt_count: 1,
        last_status_code: 200,
        completed_at: expect.stringMatching(/Z$/),
      },
    ]);
    const beta = await waitFor(async () => {
      const res = await api('beta', `/api/events/${id}`);
      return res.body.deliveries?.[0]?.status === 'succeeded' && res;
    });
    expect(beta.body.deliveries.map((d: Json) => d.webhook_id)).toEqual([betaStarted.id]);
  });

  it("answers 404 for another client's event, and never lists it", async () => {
    const id = await eventIdOf('alpha', ended.trackingId);
    expect(id).toBeDefined();
    const res = await api('beta', `/api/events/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Event not found' });
    expect((await api('beta', `/api/events/${randomUUID()}`)).status).toBe(404);
    const listed = await api('beta', '/api/events');
    expect(listed.body.data.map((e: Json) => e.event)).toEqual(['job.started']);
    // A client with no webhooks at all has no events.
    expect((await api('reader', `/api/events/${id}`)).status).toBe(404);
    expect((await api('reader', '/api/events')).body).toEqual({ data: [], next_cursor: null });
  });

  it('filters by kind and time, newest first, and pages with the cursor', async () => {
    const all = await api('alpha', '/api/events');
    expect(all.body.data.map((e: Json) => e.event)).toEqual(['job.completed', 'job.started']);
    const completed = await api('alpha', '/api/events?event=job.completed');
    expect(completed.body.data.map((e: Json) => e.event)).toEqual(['job.completed']);
    expect(completed.body.data[0].data.uuid).toBe(ended.uuid);

    const [newest, oldest] = all.body.data as Json[];
    const since = await api('alpha', `/api/events?since=${newest.created_at}`);
    expect(since.body.data.map((e: Json) => e.id)).toEqual([newest.id]);
    const until = await api('alpha', `/api/events?until=${newest.created_at}`);
    expect(until.body.data.map((e: Json) => e.id)).toEqual([oldest.id]);
    const none = await api('alpha', '/api/events?until=2000-01-01T00:00:00Z');
    expect(none.body).toEqual({ data: [], next_cursor: null });

    const first = await api('alpha', '/api/events?limit=1');
    expect(first.body.data.map((e: Json) => e.id)).toEqual([newest.id]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await api('alpha', `/api/events?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body).toEqual({
      data: [expect.objectContaining({ id: oldest.id })],
      next_cursor: null,
    });
    expect(alphaEnded.id).toBeDefined();
  });

  it.each([
    ['since=yesterday', 'since'],
    ['until=2026-13-01T00:00:00Z', 'until'],
    // Date.parse rolls these over (March 2, May 1, the next day): a date that does not exist.
    ['since=2026-02-30T00:00:00Z', 'since'],
    ['until=2026-04-31T00:00:00Z', 'until'],
    ['since=2026-01-01T24:00:00Z', 'since'],
    ['event=job.unknown', 'event'],
    ['limit=0', 'limit'],
    ['cursor=not-a-cursor', 'cursor'],
    [`tracking_id=${'x'.repeat(256)}`, 'tracking_id'],
    ['colour=blue', 'colour'],
  ])('refuses %s with 400 naming the field', async (queryString, field) => {
    const res = await api('alpha', `/api/events?${queryString}`);
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: Json) => d.field)).toContain(field);
  });

  it('refuses a malformed id with 400, no token with 401, a token without webhooks:read with 403', async () => {
    const bad = await api('alpha', '/api/events/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
    expect((await request(t.baseUrl, 'GET', '/api/events')).status).toBe(401);
    const without = await t.token('alpha', scopesOfBut('alpha', 'webhooks:read'));
    for (const path of ['/api/events', `/api/events/${randomUUID()}`]) {
      expect((await request(t.baseUrl, 'GET', path, { token: without })).status).toBe(403);
    }
  });
});
