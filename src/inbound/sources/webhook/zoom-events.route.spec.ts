import express, { NextFunction, Request, Response } from 'express';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Counter, Registry } from 'prom-client';
import { CompletionLineJson, comparableLine } from '../../../../test/support/completion-lines';
import { waitFor } from '../../../../test/support/wait-for';
import { errorAnswer } from '../../../common/all-exceptions.filter';
import { ApiError } from '../../../common/api-error';
import { completionLine } from '../../../common/logging';
import { BODY_LIMIT_BYTES, answerBodyParserErrors } from '../../../common/request-body';
import { RequestRecorder, recordRequests } from '../../../telemetry/request-record';
import { AppConfig } from '../../../config/config.types';
import { isZoomEventsRequest } from './webhook.controller';
import { WebhookReceiver } from './webhook-receiver';
import { zoomEventsRoute, zoomEventsRouteAhead } from './zoom-events.route';

/**
 * The service's answers for the cases compared: accepted when signed, 401 when not, and 503
 * when asked to (PostgreSQL away).
 */
const inbound = {
  receive: (headers: Record<string, unknown>) =>
    headers['x-fail']
      ? Promise.reject(new ApiError(503, 'Events cannot be stored right now', { quiet: true }))
      : headers['x-zm-signature']
        ? Promise.resolve({ status: 'accepted' })
        : Promise.reject(new ApiError(401, 'x-zm-signature is missing')),
} as unknown as WebhookReceiver;

/**
 * Both stacks of POST /zoom/events over one recorder: the fast path, and behind it (for a
 * compressed body) Express with the request recorder, the raw body parser and a route in
 * the controller's place answering through the filter's errorAnswer.
 */
function bothStacks() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'requests',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const lines: CompletionLineJson[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as CompletionLineJson);
      done();
    },
  });
  const config = { logLevel: 'info', role: { name: 'api' } } as AppConfig;
  const recorder = new RequestRecorder(requests, completionLine(config, stream));
  const app = express();
  app.use(recordRequests(recorder, zoomEventsRouteAhead));
  app.use(express.raw({ type: isZoomEventsRequest, limit: BODY_LIMIT_BYTES }));
  app.use(answerBodyParserErrors);
  app.post('/zoom/events', (req: Request, res: Response, next: NextFunction) => {
    inbound.receive(req.headers, req.body as Buffer).then((answer) => res.json(answer), next);
  });
  app.get('/health/live', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { body, headers } = errorAnswer(error);
    res.set(headers).status(body.statusCode).json(body);
  });
  const server = createServer(zoomEventsRoute(inbound, recorder, app));
  return { server, lines, requests };
}

describe('POST /zoom/events: one record whichever stack serves it', () => {
  let stacks: ReturnType<typeof bothStacks>;
  let base: string;

  beforeAll(async () => {
    stacks = bothStacks();
    await new Promise<void>((resolve) => stacks.server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(stacks.server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve, reject) =>
        stacks.server.close((e) => (e ? reject(e) : resolve())),
      ),
  );

  /** Sends to the fast path, or compressed to Express; the answer's status and its line. */
  const send = async (
    name: string,
    body: string,
    headers: Record<string, string>,
    gzip: boolean,
  ) => {
    const id = `${name}-${gzip ? 'express' : 'fast'}`;
    const res = await fetch(`${base}/zoom/events?case=${name}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...headers,
        'x-request-id': id,
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      },
      body: gzip ? gzipSync(body) : body,
    });
    await res.arrayBuffer();
    const [line] = await waitFor(() => {
      const found = stacks.lines.filter((l) => l.req?.id === id);
      return found.length > 0 && found;
    });
    return { status: res.status, line };
  };

  const counted = async (status: number) =>
    (await stacks.requests.get()).values
      .filter((v) => v.labels.status === String(status))
      .map((v) => ({ labels: v.labels, value: v.value }));

  it.each([
    ['accepted', 200, '{"event":"meeting.started"}', { 'x-zm-signature': 'v0=signed' }],
    ['unsigned', 401, '{"event":"meeting.started"}', {}],
    ['too-large', 413, 'x'.repeat(BODY_LIMIT_BYTES + 1), {}],
    ['unavailable', 503, '{"event":"meeting.started"}', { 'x-fail': 'yes' }],
  ])('%s: the same metric labels and the same line fields', async (name, status, body, headers) => {
    const fast = await send(name, body, headers, false);
    const viaExpress = await send(name, body, headers, true);
    expect([fast.status, viaExpress.status]).toEqual([status, status]);
    expect(comparableLine(viaExpress.line)).toEqual(comparableLine(fast.line));
    expect(fast.line).toMatchObject({
      msg: status >= 500 ? 'request errored' : 'request completed',
      level: status >= 500 ? 50 : status >= 400 ? 40 : 30,
      req: { method: 'POST', url: `/zoom/events?case=${name}` },
      res: { statusCode: status },
      responseTime: expect.any(Number),
    });
    expect(fast.line.err?.message).toBe(
      status >= 500 ? `failed with status code ${status}` : undefined,
    );
    expect(await counted(status)).toEqual([
      { labels: { method: 'POST', route: '/zoom/events', status: String(status) }, value: 2 },
    ]);
  });

  it('counts a probe and an unknown path without logging the probe', async () => {
    await (await fetch(`${base}/health/live`, { headers: { 'x-request-id': 'probe' } })).text();
    await (await fetch(`${base}/no/such/path`)).text();
    await waitFor(async () => (await counted(404)).length > 0);
    expect(await counted(404)).toEqual([
      { labels: { method: 'GET', route: 'unmatched', status: '404' }, value: 1 },
    ]);
    expect((await counted(200)).map((v) => v.labels.route)).toContain('/health/live');
    expect(stacks.lines.filter((l) => l.req?.id === 'probe')).toEqual([]);
  });
});
