import { meetingStarted, meetingUuid } from '../scripts/platform/zoom-events';
import { MAX_FRAME_BYTES } from '../src/inbound/sources/websocket/platform-socket';
import { UNREADABLE_FRAME_EVENT } from '../src/inbound/sources/websocket/unreadable-frame';
import { FakeZoom } from './support/fake-zoom';
import { FakeConnection, FakeZoomWs } from './support/fake-zoom-ws';
import { Json, metricSample } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));
const message = (content: string): string => `{"module":"message","content":${content}}`;
/** `depth` levels of objects, as JSON text. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

/**
 * Whatever the platform sends over its socket, the process lives, keeps it, and does not loop
 * (docs/inbound-sources.md, "What the bridge does with a frame or a token it cannot trust").
 */
describe('WebSocket source: frames it cannot trust', () => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let receiver: Receiver;
  let t: TestApp;
  let asIs: { url: string; path: string };

  const acknowledged = (what: string, after = 0): Promise<FakeConnection> =>
    waitFor(
      () => {
        const c = platform.current;
        return c !== null && c.acknowledged && platform.connections.length > after && c;
      },
      { timeoutMs: 30_000, what: `${what} (connections ${platform.connections.length})` },
    );
  const rowsOf = <T>(sql: string, params: unknown[] = []) =>
    queryDatabase<T>(t.database.url, sql, params);
  /** A later event through the same socket, delivered: everything before it was read. */
  const stillReading = async () => {
    const uuid = meetingUuid();
    platform.push(meetingStarted(uuid));
    await waitFor(
      () => receiver.received.some((r) => r.path === asIs.path && r.body.includes(uuid)),
      { what: 'an event after the frame delivered' },
    );
  };
  const unreadable = () =>
    rowsOf<{ payload: { payload: { part: string; text?: string; base64?: string } } }>(
      `SELECT payload FROM inbound_events WHERE event = $1 ORDER BY received_at`,
      [UNREADABLE_FRAME_EVENT],
    );

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    receiver = await startReceiver();
    // Heartbeats 5 s apart: a socket closed as silent by a loaded machine's stall would lose
    // the frame pushed to it meanwhile, as the platform's would.
    t = await startTestApp({
      env: { ...zoom.env(), ...platform.env(5000), RECONCILE_INTERVAL_MS: '0' },
    });
    asIs = receiver.route({}, 'as-is');
    await createWebhook(t, { url: asIs.url, events: ['zoom.*'] });
  });
  afterAll(async () => {
    await t?.close();
    await platform?.close();
    await receiver?.close();
    await zoom?.close();
  });

  it.each<[string, Record<string, unknown>]>([
    ['left out', {}],
    ['null', { payload: null }],
    ['a string', { payload: 'started' }],
    ['an array', { payload: [1, 2] }],
  ])(
    'stores an event whose payload is %s and delivers it to zoom.* as it came',
    async (_what, payload) => {
      await acknowledged('a socket');
      const eventTs = Date.now() + Math.floor(Math.random() * 1e6);
      const event: Record<string, unknown> = {
        event: 'meeting.started',
        event_ts: eventTs,
        ...payload,
      };
      platform.push(event);
      const [row] = await waitFor(
        async () => {
          const rows = await rowsOf<{ payload: Json; via: string }>(
            `SELECT payload, via FROM inbound_events WHERE event = 'meeting.started' AND event_ts = $1`,
            [eventTs],
          );
          return rows.length > 0 && rows;
        },
        { what: 'the event stored' },
      );
      expect(row).toEqual({ payload: event, via: 'websocket' });
      const delivered = await waitFor(
        () =>
          receiver.received.find(
            (r) => r.path === asIs.path && bodyOf(r).source?.event_ts === eventTs,
          ),
        { what: 'the event delivered to zoom.*' },
      );
      const body = bodyOf(delivered);
      expect(body.event).toBe('zoom.meeting.started');
      expect(body.data).toEqual(event.payload ?? null);
      expect(body.source.via).toBe('websocket');
    },
  );

  it('keeps a message whose content is nested 5,000 deep, and lives', async () => {
    const connection = await acknowledged('a socket');
    const asValue = message(nested(5000));
    const asText = message(JSON.stringify(nested(5000)));
    // One a megabyte deep too: JSON.parse takes it, anything that recurses would not.
    const deepest = message('['.repeat(400_000) + ']'.repeat(400_000));
    for (const frame of [asValue, asText, deepest]) platform.pushFrame(frame);
    await stillReading();
    const kept = await waitFor(
      async () => {
        const rows = await unreadable();
        const texts = rows.map((r) => r.payload.payload.text);
        return [asValue, deepest].every((f) => texts.includes(f)) && texts.includes(nested(5000))
          ? rows
          : false;
      },
      { what: 'the three frames kept as unreadable' },
    );
    expect(kept.length).toBeGreaterThanOrEqual(3);
    // The same socket read them all.
    expect(connection.closedAt).toBeNull();
    expect(await metricSample(t.baseUrl, 'platform_ws_frame_errors_total')).toBe(0);
  });

  it('reads a binary frame that is UTF-8 as text, and keeps other bytes exactly, as base64', async () => {
    await acknowledged('a socket');
    const uuid = meetingUuid();
    platform.pushFrame(Buffer.from(message(JSON.stringify(JSON.stringify(meetingStarted(uuid))))));
    const bytes = Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0xc3, 0x28, 0x80]);
    platform.pushFrame(bytes);
    await waitFor(
      async () =>
        (await rowsOf(`SELECT 1 FROM inbound_events WHERE identity_key LIKE $1`, [`%${uuid}%`]))
          .length === 1,
      { what: 'the event of the UTF-8 binary frame stored as itself' },
    );
    const kept = await waitFor(
      async () =>
        (await unreadable()).find((r) => r.payload.payload.base64 === bytes.toString('base64')),
      { what: 'the bytes kept as base64' },
    );
    expect(kept.payload.payload).toEqual({ part: 'frame', base64: bytes.toString('base64') });
    expect(JSON.stringify(await unreadable())).not.toContain('\ufffd');
  });

  it('closes a socket sending a frame over 1 MiB with 1009, counts it, records the gap and reconnects', async () => {
    const connection = await acknowledged('a socket');
    const count = platform.connections.length;
    const gapsBefore = (await rowsOf('SELECT 1 FROM inbound_gaps')).length;
    const huge = message(JSON.stringify('x'.repeat(MAX_FRAME_BYTES)));
    platform.pushFrame(huge);
    await waitFor(() => connection.closedAt !== null, { what: 'the socket closed' });
    expect(connection.closeCode).toBe(1009);
    await acknowledged('the socket after the refusal', count);
    expect(
      await metricSample(t.baseUrl, 'platform_ws_frames_refused_total{reason="too_large"}'),
    ).toBe(1);
    expect(await metricSample(t.baseUrl, 'platform_ws_reconnects_total{cause="too_large"}')).toBe(
      1,
    );
    await waitFor(
      async () =>
        (await rowsOf('SELECT 1 FROM inbound_gaps WHERE ended_at IS NOT NULL')).length > gapsBefore,
      { what: 'the gap recorded and ended' },
    );
    expect(t.logs.some((l) => /a frame over 1048576 bytes \(closed with 1009\)/.test(l))).toBe(
      true,
    );
    // Never read, never stored, never sent on.
    expect(receiver.received.some((r) => r.body.length > MAX_FRAME_BYTES)).toBe(false);
    await stillReading();
  });

  it('backs off when a socket is acknowledged and closed at once, as for any failed attempt', async () => {
    await acknowledged('a socket');
    const count = platform.connections.length;
    platform.closeAfterAcknowledging = 3;
    platform.closeCurrent(1001);
    await acknowledged('a socket that stays', count + 3);
    const opened = platform.connections.slice(count).map((c) => c.openedAt);
    // After the first failure 1 s; then up to 2, 4, 8 s, each at least half: the socket
    // that stays came at least 4 s after the third that closed at once (reset on each
    // acknowledgement, it was 1 s). Closed within a heartbeat of it, each counts as failed.
    expect(opened).toHaveLength(4);
    expect(opened[3] - opened[2]).toBeGreaterThanOrEqual(4000);
  });
});

/**
 * Token lifetimes the platform may send: each gets its own fake platform and app, as the
 * token cache of a running app already holds a token.
 */
describe.each([30, 3e6])('WebSocket source: a token with expires_in %s', (ttl) => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let t: TestApp;

  beforeAll(async () => {
    zoom = await FakeZoom.start({ tokenTtlSeconds: ttl });
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    t = await startTestApp({
      env: { ...zoom.env(), ...platform.env(2000), RECONCILE_INTERVAL_MS: '0' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await platform?.close();
    await zoom?.close();
  });

  it('keeps one socket and one token, instead of renewing them in a loop', async () => {
    // Two heartbeats answered: a socket lived four seconds (a loop replaced every socket
    // within milliseconds, hundreds a second).
    await waitFor(() => platform.heartbeats >= 2, {
      timeoutMs: 30_000,
      what: `two heartbeats (connections ${platform.connections.length}, token requests ${zoom.tokenRequests})`,
    });
    expect(platform.connections.length).toBe(1);
    expect(zoom.tokenRequests).toBe(1);
    expect(t.logs.some((l) => /TimeoutOverflowWarning/.test(l))).toBe(false);
  });
});
