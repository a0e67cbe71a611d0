import { randomUUID } from 'node:crypto';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE } from '../src/common/json-depth';
import {
  InboundEventStore,
  NewInboundEvent,
  UnserialisableEventError,
  isDataException,
} from '../src/inbound/inbound-event.store';
import { request } from './support/http';
import { waitFor } from './support/wait-for';
import { RawAnswer, rawExchange, trickle } from './support/raw-http';
import { concretePath, routesOf } from './support/routes';
import { TestApp, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { sendZoomEvent } from './support/zoom-sender';

/** `depth` levels of objects, as text: `{"a":{"a":…1…}}`. */
const nestedJson = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;

/** One test per root cause of issue 17; the fuzz suite (fuzz.e2e-spec.ts) looks for new ones. */
describe('hostile input (docs/api.md#errors)', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
    });
    token = await t.token();
  });
  afterAll(async () => {
    // Whatever came before, the process still answers.
    expect((await request(t.baseUrl, 'GET', '/health/live')).status).toBe(200);
    await t.close();
  });

  describe('JSON nested deeper than 64 levels', () => {
    it('is 400 on every route that takes a body, before anything walks it', async () => {
      const routes = routesOf(t.app).filter(
        ([method, path]) => ['POST', 'PUT', 'PATCH'].includes(method) && path !== '/zoom/events',
      );
      expect(routes.length).toBeGreaterThan(5);
      for (const [method, path] of routes) {
        for (const depth of [MAX_JSON_DEPTH + 1, 1500, 100_000]) {
          const res = await request(t.baseUrl, method, concretePath(path), {
            token,
            body: nestedJson(depth),
          });
          expect({ route: `${method} ${path}`, depth, status: res.status, body: res.body }).toEqual(
            {
              route: `${method} ${path}`,
              depth,
              status: 400,
              body: { statusCode: 400, error: 'Bad Request', message: TOO_DEEP_MESSAGE },
            },
          );
        }
      }
    }, 180_000); // every route with a body, one request each

    it('lets exactly 64 levels through to the route', async () => {
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: nestedJson(MAX_JSON_DEPTH),
      });
      expect(res.status).toBe(400);
      expect(res.body.message).not.toBe(TOO_DEEP_MESSAGE);
      expect(res.body.details).toEqual(
        expect.arrayContaining([{ field: 'a', message: expect.any(String) }]),
      );
    });

    it('on /zoom/events: 401 unsigned, 400 signed, and never fails the events beside it', async () => {
      const deep = `{"event":"meeting.started","event_ts":1,"payload":${nestedJson(5000)}}`;
      const unsigned = await sendZoomEvent(t.baseUrl, deep, { secret: 'not-the-secret' });
      expect(unsigned.status).toBe(401);

      const good = (n: number) => ({
        event: 'meeting.started',
        event_ts: 1735725605000 + n,
        payload: { account_id: 'acc', object: { uuid: `deep-neighbour-${n}==`, id: n } },
      });
      // Sent together, so the well-formed ones share insert batches with whatever else arrives.
      const [deepAnswer, ...goodAnswers] = await Promise.all([
        sendZoomEvent(t.baseUrl, deep),
        ...[1, 2, 3, 4, 5].map((n) => sendZoomEvent(t.baseUrl, good(n))),
      ]);
      expect(deepAnswer.status).toBe(400);
      expect(deepAnswer.body).toMatchObject({ message: TOO_DEEP_MESSAGE });
      expect(goodAnswers.map((a) => [a.status, a.body])).toEqual(
        goodAnswers.map(() => [200, { status: 'accepted' }]),
      );
      const rows = await queryDatabase<{ n: string }>(
        t.database.url,
        `SELECT count(*) AS n FROM inbound_events WHERE payload->'payload'->'object'->>'uuid' LIKE 'deep-neighbour-%'`,
      );
      expect(Number(rows[0].n)).toBe(5);
    });
  });

  it('fails only the event that cannot be serialised, never the batch stored beside it', async () => {
    // The real store on the real database; the HTTP route refuses such events earlier (the
    // depth limit), so this drives the store as a future caller could.
    const store = t.app.get(InboundEventStore);
    const event = (key: string, payload: Record<string, unknown>): NewInboundEvent => ({
      id: randomUUID(),
      event: 'meeting.started',
      identityKey: `unserialisable-${key}`,
      eventTs: 1,
      accountId: null,
      trackingId: null,
      via: 'webhook',
      downloadTokenEncrypted: null,
      payload,
      plan: { then: 'done' },
      leaseMs: null,
    });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const deep: unknown = JSON.parse('['.repeat(200_000) + ']'.repeat(200_000));
    const results = await Promise.allSettled([
      store.insert(event('a', { n: 1 })),
      store.insert(event('deep', { deep })),
      store.insert(event('b', { n: 2 })),
      store.insert(event('circular', circular)),
      store.insert(event('bigint', { n: 1n })),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'rejected',
    ]);
    for (const bad of [results[1], results[3], results[4]]) {
      const reason = (bad as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(UnserialisableEventError);
      // What the inbound service answers with 400, not 503.
      expect(isDataException(reason)).toBe(true);
    }
    const stored = await queryDatabase<{ identity_key: string }>(
      t.database.url,
      `SELECT identity_key FROM inbound_events WHERE identity_key LIKE 'unserialisable-%' ORDER BY 1`,
    );
    expect(stored.map((r) => r.identity_key)).toEqual(['unserialisable-a', 'unserialisable-b']);
  });

  it('answers a body its Content-Encoding does not match with 400, an unknown encoding with 415', async () => {
    for (const path of ['/api/webhooks', '/oauth/token', '/zoom/events']) {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await request(t.baseUrl, 'POST', path, {
          token,
          body: '{"not":"compressed"}',
          headers: { 'content-encoding': encoding },
        });
        expect({ path, encoding, status: res.status }).toEqual({ path, encoding, status: 400 });
      }
      const unknown = await request(t.baseUrl, 'POST', path, {
        token,
        body: '{}',
        headers: { 'content-encoding': 'x-squash' },
      });
      expect({ path, status: unknown.status }).toEqual({ path, status: 415 });
    }
  });

  it('answers a cursor whose time PostgreSQL would refuse with 400 naming it', async () => {
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: {
        url: 'http://127.0.0.1:9/hook',
        events: ['job.started'],
        secret: 'hostile-secret-0123456789',
      },
    });
    expect(created.status).toBe(201);
    const cursorOf = (time: string) =>
      Buffer.from(JSON.stringify([time, '6f1c5c3e-0000-4000-8000-000000000000'])).toString(
        'base64url',
      );
    const lists = ['/api/webhooks', `/api/webhooks/${created.body.id}/deliveries`];
    for (const list of lists) {
      for (const time of [
        '+275760-09-13T00:00:00.000Z',
        '0000-01-01T00:00:00.000Z',
        '-000001-01-01T00:00:00.000Z',
        '-271821-04-20T00:00:00.000Z',
      ]) {
        const res = await request(t.baseUrl, 'GET', `${list}?cursor=${cursorOf(time)}`, { token });
        expect({ list, time, status: res.status, details: res.body.details }).toEqual({
          list,
          time,
          status: 400,
          details: [{ field: 'cursor', message: 'cursor is not a valid page cursor' }],
        });
      }
    }
  });

  describe('requests Node refuses before the application', () => {
    const loggedAnswer = (status: number) =>
      t.logs.some((line) => line.includes(`answered ${status} before the application`));

    const expectAnswered = (answer: RawAnswer, status: number) => {
      expect({ status: answer.status, ended: answer.ended }).toEqual({ status, ended: 'closed' });
      expect(answer.body).toMatchObject({ statusCode: status, message: expect.any(String) });
      expect(answer.text).toMatch(/\r\nconnection: close\r\n/i);
    };

    it('answers raw 0xFF bytes in the request line, body and all, with 400 and logs it', async () => {
      const garbage = Buffer.concat([
        Buffer.from([0xff, 0xfe, 0xff]),
        Buffer.from(' /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n'),
        Buffer.alloc(100_000, 'x'),
      ]);
      expectAnswered(await rawExchange(t.baseUrl, garbage), 400);
      expect(loggedAnswer(400)).toBe(true);
    });

    it('answers broken bytes after a request in flight once, and the late answer of its handler is no error', async () => {
      const before = t.logs.length;
      const answer = await rawExchange(
        t.baseUrl,
        'GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n\xff\xfe broken\r\n\r\n',
      );
      expect(answer.status).toBe(400);
      // The handler's own answer comes after the server's 400: said as a warning, never as a
      // 500 of the error filter (src/common/all-exceptions.filter.ts).
      await waitFor(
        () => t.logs.slice(before).some((l) => l.includes('after the server had answered 400')),
        {
          what: "the handler's late answer logged",
        },
      );
      expect(t.logs.slice(before).filter((l) => l.includes('"level":50'))).toEqual([]);
    });

    it('answers headers over the limit with 431 while the body is still being sent', async () => {
      const head =
        'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `X-Big: ${'b'.repeat(32 * 1024)}\r\nContent-Length: 1000000\r\n\r\n`;
      const answer = await rawExchange(t.baseUrl, head + 'x'.repeat(200_000), {
        then: trickle(20, 'x'.repeat(1024)),
      });
      expectAnswered(answer, 431);
      expect(loggedAnswer(431)).toBe(true);
    });

    it('answers CONNECT, which Node would close without a word, with 405', async () => {
      const answer = await rawExchange(
        t.baseUrl,
        'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      );
      expectAnswered(answer, 405);
    });

    it('cuts off a body sent byte by byte at the request timeout with 408', async () => {
      const head =
        'POST /api/webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 1000\r\n\r\n{`;
      // Node's default would hold this for 300 s and more.
      const answer = await rawExchange(t.baseUrl, head, { then: trickle(100, ' ') });
      expectAnswered(answer, 408);
      expect(loggedAnswer(408)).toBe(true);
    });

    it('cuts off headers sent byte by byte at the headers timeout with 408', async () => {
      const answer = await rawExchange(t.baseUrl, 'GET /health/live HTTP/1.1\r\nX-Slow: ', {
        then: trickle(100, 's'),
      });
      expectAnswered(answer, 408);
    });
  });
});
