import { meetingStarted, meetingUuid, participantJoined } from '../scripts/platform/zoom-events';
import { UNREADABLE_FRAME_EVENT } from '../src/inbound/sources/websocket/unreadable-frame';
import { FakeZoom } from './support/fake-zoom';
import { FakeConnection, FakeZoomWs, Refusal } from './support/fake-zoom-ws';
import { Json, metricSample, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, deleteRedisKeys, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));

interface GapRow {
  started_at: Date;
  ended_at: Date | null;
}

/** The platform's events over its WebSocket (docs/inbound-sources.md), one process of role all. */
describe('WebSocket source (role all, against the fake platform socket)', () => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let receiver: Receiver;
  let t: TestApp;
  let started: { url: string; path: string };
  let asIs: { url: string; path: string };
  let adminToken: string;
  /** Set once the app was started again over its own data: then dropped here. */
  let restartedOver: { drop(): Promise<void>; prefix: string } | null = null;

  const acknowledged = (what: string, after = 0): Promise<FakeConnection> =>
    waitFor(
      () => {
        const c = platform.current;
        return c !== null && c.acknowledged && platform.connections.length > after && c;
      },
      {
        timeoutMs: 30_000,
        what: `${what} (connections ${platform.connections.length}, open ${platform.openCount}, refused ${platform.refused.join(',')})`,
      },
    );
  /**
   * Two heartbeats answered after `connection`'s acknowledgement: it has lived a heartbeat
   * interval, so its end resets the backoff (one closed sooner counts as a failed attempt).
   */
  const lived = async (connection: FakeConnection) => {
    const heartbeats = platform.heartbeats;
    await waitFor(() => platform.heartbeats >= heartbeats + 2 || connection.closedAt !== null, {
      what: 'two heartbeats on the socket',
    });
  };
  const gaps = () =>
    queryDatabase<GapRow>(
      t.database.url,
      'SELECT started_at, ended_at FROM inbound_gaps ORDER BY started_at',
    );
  const status = async () => {
    const res = await request(t.baseUrl, 'GET', '/api/inbound/status', { token: adminToken });
    expect(res.status).toBe(200);
    return res.body;
  };
  const notificationsOf = (path: string, uuid: string) =>
    receiver.received.filter((r) => r.path === path && r.body.includes(uuid));

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    receiver = await startReceiver();
    // No scheduled reconciliation: its report calls would renew a revoked token before the
    // socket meets the refusal these tests make.
    t = await startTestApp({
      env: { ...zoom.env(), ...platform.env(1000), RECONCILE_INTERVAL_MS: '0' },
    });
    started = receiver.route({}, 'started');
    asIs = receiver.route({}, 'as-is');
    await createWebhook(t, { url: started.url, events: ['job.started'] });
    await createWebhook(t, { url: asIs.url, events: ['zoom.*'] });
    adminToken = await t.token('admin');
  });
  afterAll(async () => {
    await t?.close();
    if (restartedOver) {
      await restartedOver.drop();
      await deleteRedisKeys(restartedOver.prefix);
    }
    await platform?.close();
    await receiver?.close();
    await zoom?.close();
  });

  it('connects with the server-to-server token and delivers an event with source.via "websocket"', async () => {
    const connection = await acknowledged('the first socket');
    expect(zoom.acceptsToken(connection.token)).toBe(true);
    const uuid = meetingUuid();
    platform.push(meetingStarted(uuid));
    const [notification] = await waitFor(
      () => notificationsOf(started.path, uuid).length > 0 && notificationsOf(started.path, uuid),
      {
        what: 'job.started of the socket event',
      },
    );
    expect(bodyOf(notification).source).toMatchObject({
      platform: 'zoom',
      event: 'meeting.started',
      via: 'websocket',
    });
    const [row] = await queryDatabase<{ via: string }>(
      t.database.url,
      `SELECT via FROM inbound_events WHERE event = 'meeting.started' AND identity_key LIKE $1`,
      [`%${uuid}%`],
    );
    expect(row.via).toBe('websocket');
    await waitFor(async () => (await metricSample(t.baseUrl, 'platform_ws_connected')) === 1, {
      what: 'platform_ws_connected 1',
    });
    const ready = await request(t.baseUrl, 'GET', '/health/ready');
    expect(ready.body.websocket).toEqual({ state: 'connected' });
    // Heartbeats go out and are answered.
    await waitFor(() => platform.heartbeats > 0, { what: 'a heartbeat' });
  });

  it('delivers an event that came by webhook and by socket once, whichever came first', async () => {
    await acknowledged('a socket');
    const first = meetingUuid();
    expect((await sendZoomEvent(t.baseUrl, meetingStarted(first))).status).toBe(200);
    const second = meetingUuid();
    platform.push(meetingStarted(second));
    await waitFor(() => notificationsOf(started.path, second).length > 0, { what: 'second' });
    const duplicates = await metricSample(
      t.baseUrl,
      'inbound_events_total{event="meeting.started",outcome="duplicate",via="websocket"}',
    );
    platform.push(meetingStarted(first));
    expect((await sendZoomEvent(t.baseUrl, meetingStarted(second))).status).toBe(200);
    await waitFor(
      async () =>
        (await metricSample(
          t.baseUrl,
          'inbound_events_total{event="meeting.started",outcome="duplicate",via="websocket"}',
        )) ===
        duplicates + 1,
      { what: 'the socket copy counted as a duplicate' },
    );
    // A third, later event through the same socket shows everything before it was handled.
    const later = meetingUuid();
    platform.push(meetingStarted(later));
    await waitFor(
      () =>
        [later, first, second].every(
          (u) =>
            notificationsOf(started.path, u).length > 0 && notificationsOf(asIs.path, u).length > 0,
        ),
      { what: 'every event delivered to both webhooks' },
    );
    for (const uuid of [first, second]) {
      expect(notificationsOf(started.path, uuid)).toHaveLength(1);
      expect(notificationsOf(asIs.path, uuid)).toHaveLength(1);
    }
    const rows = await queryDatabase<{ n: string }>(
      t.database.url,
      `SELECT count(*) AS n FROM inbound_events WHERE identity_key LIKE $1 OR identity_key LIKE $2`,
      [`%${first}%`, `%${second}%`],
    );
    expect(Number(rows[0].n)).toBe(2);
  });

  it('keeps every poison frame: content that is not JSON, not an object, null, no content, a frame that is not JSON', async () => {
    await acknowledged('a socket');
    const before = await queryDatabase<{ n: string }>(
      t.database.url,
      'SELECT count(*) AS n FROM inbound_events',
    );
    const contents = ['not json at all {', '[1,2,3]', 'null', '"a string"', '42'];
    for (const content of contents) platform.push(content);
    platform.pushFrame(JSON.stringify({ module: 'message' }));
    platform.pushFrame('garbage that is no frame');
    const payloadNull = { ...participantJoined(meetingUuid()), payload: null };
    platform.push(payloadNull);
    const expected = Number(before[0].n) + contents.length + 3;
    await waitFor(
      async () => {
        const [row] = await queryDatabase<{ n: string }>(
          t.database.url,
          'SELECT count(*) AS n FROM inbound_events',
        );
        return Number(row.n) === expected;
      },
      { what: `${expected} inbound events` },
    );
    const kept = await queryDatabase<{ text: string }>(
      t.database.url,
      `SELECT payload->'payload'->>'text' AS text FROM inbound_events WHERE event = $1`,
      [UNREADABLE_FRAME_EVENT],
    );
    const texts = kept.map((k) => k.text);
    for (const content of contents) {
      // Content the ingest can read as an object is stored as itself; the rest wrapped.
      expect(texts).toContain(content);
    }
    expect(texts).toContain('garbage that is no frame');
    expect(texts).toContain(JSON.stringify({ module: 'message' }));
    // Every kept frame reaches zoom.* subscribers, as unmappable events do.
    await waitFor(
      () =>
        receiver.received.filter((r) => r.path === asIs.path && /unreadable/.test(bodyOf(r).event))
          .length >=
        contents.length + 2,
      { what: 'the kept frames delivered to zoom.*' },
    );
  });

  it('replaces a socket the platform closed, and records the gap from its last frame to the next acknowledgement', async () => {
    const old = await acknowledged('a socket');
    const count = platform.connections.length;
    const gapsBefore = (await gaps()).length;
    platform.closeCurrent(1001);
    const next = await acknowledged('the replacement socket', count);
    expect(next).not.toBe(old);
    const recorded = await waitFor(
      async () => {
        const all = await gaps();
        return all.length > gapsBefore && all[all.length - 1].ended_at !== null && all;
      },
      { what: 'an ended gap' },
    );
    const gap = recorded[recorded.length - 1];
    expect(gap.started_at.getTime()).toBeLessThanOrEqual(old.closedAt ?? Infinity);
    expect(gap.ended_at!.getTime()).toBeGreaterThanOrEqual(next.openedAt - 1000);
    const body = await status();
    expect(body.websocket.gaps[0]).toEqual({
      from: gap.started_at.toISOString(),
      until: gap.ended_at!.toISOString(),
      reconciliation_id: null,
    });
    expect(
      await metricSample(t.baseUrl, 'platform_ws_reconnects_total{cause="closed"}'),
    ).toBeGreaterThan(0);
  });

  it('replaces a socket that went silent (no frame for two heartbeat intervals)', async () => {
    const old = await acknowledged('a socket');
    const count = platform.connections.length;
    platform.silent = true;
    await waitFor(() => old.closedAt !== null, {
      timeoutMs: 30_000,
      what: 'the silent socket closed',
    });
    platform.silent = false;
    await acknowledged('the socket after the silence', count);
    expect(
      await metricSample(t.baseUrl, 'platform_ws_reconnects_total{cause="silent"}'),
    ).toBeGreaterThan(0);
  });

  it.each<Refusal>(['http401', 'build_connection', 'close1008'])(
    'replaces a token refused by %s with a fresh one',
    async (refusal) => {
      const old = await acknowledged('a socket');
      await lived(old);
      const tokenRequests = zoom.tokenRequests;
      const count = platform.connections.length;
      const refusedBefore = platform.refused.length;
      platform.refusal = refusal;
      zoom.revokeTokens();
      platform.closeCurrent(1001);
      const next = await acknowledged(`the socket after a ${refusal} refusal`, count);
      expect(platform.refused.slice(refusedBefore)).toContain(refusal);
      expect(next.token).not.toBe(old.token);
      expect(zoom.tokenRequests).toBeGreaterThan(tokenRequests);
      expect(
        await metricSample(t.baseUrl, 'platform_ws_reconnects_total{cause="refused"}'),
      ).toBeGreaterThan(0);
    },
  );

  it('shows the state, reconnects and gaps newest first to bridge:admin only', async () => {
    await acknowledged('a socket');
    const body = await waitFor(
      async () => {
        const s = await status();
        return s.websocket.state === 'connected' && s;
      },
      { what: 'state connected' },
    );
    expect(body.webhook).toEqual({ configured: true, last_event_at: expect.any(String) });
    expect(body.websocket).toMatchObject({
      configured: true,
      state: 'connected',
      connected_since: expect.any(String),
      last_frame_at: expect.any(String),
    });
    expect(body.websocket.reconnects).toBeGreaterThanOrEqual(5);
    const froms = body.websocket.gaps.map((g: Json) => g.from);
    expect(froms).toEqual([...froms].sort().reverse());
    expect(body.websocket.gaps.length).toBeGreaterThanOrEqual(5);
    const forbidden = await request(t.baseUrl, 'GET', '/api/inbound/status', {
      token: await t.token('alpha'),
    });
    expect(forbidden.status).toBe(403);
    expect((await request(t.baseUrl, 'GET', '/api/inbound/status')).status).toBe(401);
  });

  it('never writes a socket token in a log line, the metrics or an answer', async () => {
    const tokens = platform.connections.map((c) => c.token);
    expect(tokens.length).toBeGreaterThan(3);
    const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
    const answers = JSON.stringify(await status()) + metrics;
    for (const token of tokens) {
      expect(t.logs.filter((line) => line.includes(token))).toEqual([]);
      expect(answers.includes(token)).toBe(false);
    }
    expect(t.logs.some((line) => /access_token=/.test(line))).toBe(false);
    // The log does tell what happened, without it.
    expect(t.logs.some((line) => /platform socket ended \(refused/.test(line))).toBe(true);
  });

  it('records a gap across a whole-deployment restart, from the last frame recorded', async () => {
    await acknowledged('a socket');
    const { database, config } = t;
    const lastFrame = (await status()).websocket.last_frame_at as string;
    await t.app.close();
    const open = await waitFor(async () => (await gaps()).find((g) => g.ended_at === null), {
      what: 'the open gap after the stop',
    });
    expect(open.started_at.getTime()).toBeGreaterThanOrEqual(new Date(lastFrame).getTime());
    const count = platform.connections.length;
    restartedOver = { drop: () => database.drop(), prefix: config.redis.prefix };
    t = await startTestApp({
      database,
      queuePrefix: config.redis.prefix,
      env: { ...zoom.env(), ...platform.env(1000) },
    });
    const next = await acknowledged('the socket after the restart', count);
    const ended = await waitFor(
      async () =>
        (await gaps()).find(
          (g) => g.started_at.getTime() === open.started_at.getTime() && g.ended_at,
        ),
      { what: 'the gap ended' },
    );
    expect(ended.ended_at!.getTime()).toBeGreaterThanOrEqual(next.openedAt - 1000);
    adminToken = await t.token('admin');
    expect((await status()).websocket.gaps[0].until).toBe(ended.ended_at!.toISOString());
  });
});

describe('WebSocket source: a fresh token before the held one expires', () => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let t: TestApp;

  beforeAll(async () => {
    // Renewal is due 60 s before expiry, but never sooner than a minute after the token came:
    // 61 s after connecting, the swap, 9 s before the held token expires.
    zoom = await FakeZoom.start({ tokenTtlSeconds: 70 });
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    // No scheduled reconciliation: its report calls would renew a revoked token before the
    // socket meets the refusal these tests make.
    t = await startTestApp({
      env: { ...zoom.env(), ...platform.env(1000), RECONCILE_INTERVAL_MS: '0' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await platform?.close();
    await zoom?.close();
  });

  it('opens a socket with a fresh token, the platform closes the older, and no gap is recorded', async () => {
    const first = await waitFor(() => platform.current ?? false, {
      timeoutMs: 30_000,
      what: 'first socket',
    });
    const second = await waitFor(
      () => platform.connections.length >= 2 && first.closedAt !== null && platform.current,
      { timeoutMs: 120_000, what: `a second socket (${platform.connections.length})` },
    );
    expect(second!.token).not.toBe(first.token);
    expect(platform.replaced).toBeGreaterThanOrEqual(1);
    const uuid = meetingUuid();
    platform.push(meetingStarted(uuid));
    await waitFor(
      async () =>
        (
          await queryDatabase(
            t.database.url,
            'SELECT 1 FROM inbound_events WHERE identity_key LIKE $1',
            [`%${uuid}%`],
          )
        ).length === 1,
      { what: 'the event over the fresh socket stored' },
    );
    const gaps = await queryDatabase(t.database.url, 'SELECT * FROM inbound_gaps');
    expect(gaps).toEqual([]);
  }, 180_000); // A token is kept at least a minute: the swap comes a minute in.
});
