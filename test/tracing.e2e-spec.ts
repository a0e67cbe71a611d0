import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { meetingStarted, registrationCreated, zoomHeaders } from '../scripts/platform/zoom-events';
import { FakeZoom } from './support/fake-zoom';
import { request } from './support/http';
import { CollectedSpan, OtlpCollector, startCollector } from './support/otlp-collector';
import { Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, spawnTestMs, startWorker } from './support/spawn-app';
import { TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { freshTrackingId, sendTracked } from './support/zoom-sender';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/** The request span of the event with this tracking id, once the collector has it. */
function rootSpan(collector: OtlpCollector, trackingId: string): Promise<CollectedSpan> {
  return waitFor(
    () =>
      collector
        .withAttribute('zoom.tracking_id', trackingId)
        .find((s) => s.name === 'POST /zoom/events'),
    { what: `the request span of ${trackingId}` },
  );
}

/** The attempt spans of a trace, in attempt order, once there are `count` of them. */
function attemptSpans(
  collector: OtlpCollector,
  traceId: string,
  count: number,
): Promise<CollectedSpan[]> {
  return waitFor(
    () => {
      const attempts = collector
        .trace(traceId)
        .filter((s) => s.attributes['bridge.attempt'] !== undefined)
        .sort(
          (a, b) => Number(a.attributes['bridge.attempt']) - Number(b.attributes['bridge.attempt']),
        );
      return attempts.length >= count && attempts;
    },
    { what: `${count} attempt spans in trace ${traceId}` },
  );
}

/** Tracing to `collector`, in the default http/protobuf unless `protocol` says otherwise. */
const otel = (
  collector: OtlpCollector,
  serviceName = 'bridge-under-test',
  protocol = 'http/protobuf',
) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: serviceName,
});

const parsedLogs = (t: TestApp) =>
  t.logs.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('traces (docs/operations.md), one process (role all)', () => {
  let collector: OtlpCollector;
  let receiver: Receiver;
  let fake: FakeZoom;
  let t: TestApp;

  beforeAll(async () => {
    collector = await startCollector();
    receiver = await startReceiver();
    fake = await FakeZoom.start();
    // A generous attempt deadline: on a loaded machine a 500 must not turn into a timeout.
    t = await startTestApp({
      env: { ...otel(collector), ...fake.env(), DELIVERY_TIMEOUT_MS: '10000' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
    await receiver?.close();
    await collector?.close();
  });

  it('gives an event whose first attempt fails one trace: the request, mapping, publish and both attempts', async () => {
    const route = receiver.route({ statuses: [500, 200] }, 'flaky');
    const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
    const trackingId = await sendTracked(t.baseUrl, meetingStarted(`trace-${randomUUID()}`));
    await waitFor(() => receiver.requests(route.path).length === 2, { what: 'two attempts' });

    const root = await rootSpan(collector, trackingId);
    expect(root).toMatchObject({
      kind: SERVER,
      parentSpanId: null,
      serviceName: 'bridge-under-test',
      attributes: expect.objectContaining({
        'http.request.method': 'POST',
        'http.route': '/zoom/events',
        'http.response.status_code': 200,
        'zoom.event': 'meeting.started',
        'zoom.tracking_id': trackingId,
        'bridge.outcome': 'accepted',
        'bridge.inbound_id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      }),
    });
    const [first, second] = await attemptSpans(collector, root.traceId, 2);
    const trace = collector.trace(root.traceId);
    const mapping = trace.find((s) => s.name === 'bridge.map');
    const publish = trace.find((s) => s.name === 'bridge.publish');
    expect(mapping).toMatchObject({
      parentSpanId: root.spanId,
      attributes: expect.objectContaining({ 'bridge.event': 'job.started' }),
    });
    expect(publish).toMatchObject({
      parentSpanId: root.spanId,
      attributes: expect.objectContaining({
        'bridge.event': 'job.started',
        'bridge.deliveries': 1,
      }),
    });

    const [delivery] = await queryDatabase<{ id: string }>(
      t.database.url,
      `SELECT id FROM deliveries WHERE webhook_id = $1`,
      [webhook.id],
    );
    const common = {
      'http.request.method': 'POST',
      'bridge.webhook_id': webhook.id,
      'bridge.delivery_id': delivery.id,
      'bridge.event': 'job.started',
      'bridge.destination.type': 'http',
    };
    expect(first).toMatchObject({
      name: 'POST',
      kind: CLIENT,
      parentSpanId: publish!.spanId,
      status: { code: ERROR },
      attributes: expect.objectContaining({
        ...common,
        'bridge.attempt': 1,
        'http.response.status_code': 500,
        'bridge.delivery.status': 'pending',
      }),
    });
    expect(second).toMatchObject({
      name: 'POST',
      kind: CLIENT,
      parentSpanId: publish!.spanId,
      attributes: expect.objectContaining({
        ...common,
        'bridge.attempt': 2,
        'http.response.status_code': 200,
        'bridge.delivery.status': 'succeeded',
      }),
    });
    expect(second.status.code).not.toBe(ERROR);

    // Each attempt names its own span to the receiver, which can continue the trace.
    expect(receiver.requests(route.path).map((r) => r.headers.traceparent)).toEqual([
      `00-${root.traceId}-${first.spanId}-01`,
      `00-${root.traceId}-${second.spanId}-01`,
    ]);

    // Log lines lead to the trace: the request's line, and the failed attempt's.
    const lines = parsedLogs(t);
    const requestLine = lines.find(
      (l) =>
        l.msg === 'request completed' &&
        (l.req as { url?: string })?.url === '/zoom/events' &&
        l.trace_id === root.traceId,
    );
    expect(requestLine).toMatchObject({ span_id: root.spanId });
    const retryLine = lines.find(
      (l) =>
        typeof l.msg === 'string' &&
        l.msg.includes(`delivery ${delivery.id}`) &&
        l.msg.includes('will retry'),
    );
    expect(retryLine).toMatchObject({ trace_id: root.traceId, span_id: first.spanId });
  });

  it('makes the inbound job a span of the trace, with its publishes and their attempts under it', async () => {
    const route = receiver.route({}, 'registrations');
    await createWebhook(t, { url: route.url, events: ['follower.gained'] });
    const uuid = `job-${randomUUID()}`;
    const registration = registrationCreated(uuid);
    (registration.payload.object as { registrant: { id: string } }).registrant.id = `reg-${uuid}`;
    const trackingId = await sendTracked(t.baseUrl, registration);
    await waitFor(() => receiver.requests(route.path).length === 1, { what: 'the delivery' });

    const root = await rootSpan(collector, trackingId);
    const [attempt] = await attemptSpans(collector, root.traceId, 1);
    const trace = collector.trace(root.traceId);
    const job = trace.find((s) => s.name === 'bridge.inbound.job');
    expect(job).toMatchObject({
      parentSpanId: root.spanId,
      attributes: expect.objectContaining({
        'zoom.event': 'meeting.registration_created',
        'bridge.inbound_id': root.attributes['bridge.inbound_id'],
        'bridge.event': 'follower.gained',
      }),
    });
    const publish = trace.find(
      (s) => s.name === 'bridge.publish' && s.attributes['bridge.event'] === 'follower.gained',
    );
    expect(publish?.parentSpanId).toBe(job!.spanId);
    expect(attempt.parentSpanId).toBe(publish!.spanId);

    // The job's lines carry its span.
    const published = parsedLogs(t).find(
      (l) =>
        typeof l.msg === 'string' &&
        l.msg.includes(String(root.attributes['bridge.inbound_id'])) &&
        l.msg.endsWith('published follower.gained'),
    );
    expect(published).toMatchObject({ trace_id: root.traceId, span_id: job!.spanId });
  });

  it('traces an event with a compressed body (served through Express) the same way', async () => {
    const trackingId = freshTrackingId();
    const body = Buffer.from(JSON.stringify(meetingStarted(`gzip-${randomUUID()}`)));
    const res = await fetch(`${t.baseUrl}/zoom/events`, {
      method: 'POST',
      headers: {
        ...zoomHeaders(ZOOM_SECRET_TOKEN, body),
        'x-zm-trackingid': trackingId,
        'content-encoding': 'gzip',
      },
      body: gzipSync(body),
    });
    expect(res.status).toBe(200);
    const root = await rootSpan(collector, trackingId);
    expect(root.attributes).toMatchObject({
      'http.response.status_code': 200,
      'bridge.outcome': 'accepted',
      'zoom.event': 'meeting.started',
    });
    await waitFor(() => collector.trace(root.traceId).some((s) => s.name === 'bridge.publish'));
    const requestLine = t.logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((l) => l.msg === 'request completed' && l.trace_id === root.traceId);
    expect(requestLine).toMatchObject({ span_id: root.spanId, res: { statusCode: 200 } });
  });

  it('starts a trace of its own for a test delivery', async () => {
    const route = receiver.route({}, 'tested');
    const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
    const res = await request(t.baseUrl, 'POST', `/api/webhooks/${webhook.id}/test`, {
      token: await t.token(),
    });
    expect(res.status).toBe(202);
    const [received] = await waitFor(
      () => receiver.requests(route.path).length > 0 && receiver.requests(route.path),
    );
    const [, traceId, spanId] = String(received.headers.traceparent).split('-');
    const trace = await waitFor(
      () => collector.trace(traceId).length >= 2 && collector.trace(traceId),
      { what: 'the test delivery trace' },
    );
    const root = trace.find((s) => s.parentSpanId === null);
    expect(root).toMatchObject({
      name: 'bridge.webhook.test',
      attributes: expect.objectContaining({ 'bridge.webhook_id': webhook.id }),
    });
    expect(trace.find((s) => s.spanId === spanId)).toMatchObject({
      kind: CLIENT,
      parentSpanId: root!.spanId,
      attributes: expect.objectContaining({ 'bridge.event': 'webhook.test', 'bridge.attempt': 1 }),
    });
    expect(trace.some((s) => s.name === 'POST /zoom/events')).toBe(false);
  });

  it('makes each passthrough call a client span carrying the platform tracking id', async () => {
    const res = await request(t.baseUrl, 'GET', '/api/users?page_size=1', {
      token: await t.token(),
    });
    expect(res.status).toBe(200);
    const trackingId = res.headers.get('x-zm-trackingid') ?? fake.lastTrackingId;
    const span = await waitFor(
      () =>
        collector
          .withAttribute('zoom.tracking_id', trackingId)
          .find((s) => s.kind === CLIENT && s.name === 'GET'),
      { what: 'the passthrough span' },
    );
    expect(span.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'server.address': '127.0.0.1',
    });
    expect(String(span.attributes['url.full'])).toMatch(/\/users$/);
  });
});

describe('traces off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let collector: OtlpCollector;
  let receiver: Receiver;
  let t: TestApp;

  beforeAll(async () => {
    collector = await startCollector();
    receiver = await startReceiver();
    // The collector listens, but nothing names it: the app must neither trace nor export.
    t = await startTestApp({ env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await collector?.close();
  });

  it('exports nothing, sends no traceparent and stores no trace context', async () => {
    const route = receiver.route({ statuses: [500, 200] }, 'untraced');
    const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
    await sendTracked(t.baseUrl, meetingStarted(`untraced-${randomUUID()}`));
    await waitFor(() => receiver.requests(route.path).length === 2, { what: 'two attempts' });
    expect(receiver.requests(route.path).map((r) => r.headers.traceparent)).toEqual([
      undefined,
      undefined,
    ]);
    const rows = await queryDatabase<{ trace_context: string | null }>(
      t.database.url,
      `SELECT trace_context FROM deliveries WHERE webhook_id = $1`,
      [webhook.id],
    );
    expect(rows).toEqual([{ trace_context: null }]);
    expect(t.logs.some((line) => line.includes('"trace_id"'))).toBe(false);
    expect(collector.requests).toBe(0);
  });
});

describe('traces across processes (role api + role worker)', () => {
  let collector: OtlpCollector;
  let receiver: Receiver;
  let t: TestApp;
  const workers: SpawnedApp[] = [];

  beforeAll(async () => {
    collector = await startCollector();
    receiver = await startReceiver();
    t = await startTestApp({
      env: { APP_ROLE: 'api', ...otel(collector, 'bridge-api'), DELIVERY_TIMEOUT_MS: '10000' },
    });
    await startWorker(t, {
      env: {
        DELIVERY_BACKOFF_MS: '50',
        DELIVERY_TIMEOUT_MS: '10000',
        // The other protocol: the trace is one whichever each process exports in.
        ...otel(collector, 'bridge-worker', 'http/json'),
      },
      workers,
    });
  }, spawnTestMs(1));
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await t?.close();
    await receiver?.close();
    await collector?.close();
  });

  it("joins the worker's attempt spans to the trace of the API's request", async () => {
    const route = receiver.route({ statuses: [503, 200] }, 'split');
    await createWebhook(t, { url: route.url, events: ['job.started'] });
    const trackingId = await sendTracked(t.baseUrl, meetingStarted(`split-${randomUUID()}`));
    await waitFor(() => receiver.requests(route.path).length === 2, { what: 'two attempts' });
    const root = await rootSpan(collector, trackingId);
    expect(root.serviceName).toBe('bridge-api');
    const attempts = await attemptSpans(collector, root.traceId, 2);
    expect(attempts.map((s) => [s.serviceName, s.attributes['http.response.status_code']])).toEqual(
      [
        ['bridge-worker', 503],
        ['bridge-worker', 200],
      ],
    );
    const publish = collector.trace(root.traceId).find((s) => s.name === 'bridge.publish');
    expect(attempts.every((s) => s.parentSpanId === publish?.spanId)).toBe(true);
    expect(receiver.requests(route.path).map((r) => r.headers.traceparent)).toEqual(
      attempts.map((s) => `00-${root.traceId}-${s.spanId}-01`),
    );
  });
});
