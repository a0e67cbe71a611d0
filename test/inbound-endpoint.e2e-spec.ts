import { EVENT_EXAMPLES } from '../src/webhooks/event-examples';
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { EVENT_MAPPING } from '../src/inbound/event-mapping';
import { INLINE_FANOUT_MAX } from '../src/inbound/inbound-event.store';
import { startReceiver } from './support/receiver';
import { waitFor } from './support/wait-for';
import { insertWebhook } from './support/webhooks';
import { CompletionLineJson, comparableLine } from './support/completion-lines';
import { metricSample, request } from './support/http';
import { queryDatabase } from './support/test-db';
import { TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { sendZoomEvent } from './support/zoom-sender';
import {
  meetingEnded,
  meetingStarted,
  meetingUpdated,
  meetingUuid,
  recordingCompleted,
  urlValidation,
  zoomHeaders,
} from '../scripts/platform/zoom-events';

const now = () => Math.floor(Date.now() / 1000);

describe('POST /zoom/events: verification, URL validation, storage (role api)', () => {
  let t: TestApp;
  const stored = async () =>
    queryDatabase<{ event: string; identity_key: string; payload: Record<string, unknown> }>(
      t.database.url,
      'SELECT event, identity_key, payload FROM inbound_events ORDER BY received_at',
    );

  const setActive = (id: string, active: boolean) =>
    queryDatabase(t.database.url, 'UPDATE webhooks SET active = $2 WHERE id = $1', [id, active]);

  beforeAll(async () => {
    // role api: no worker takes the jobs, so what the endpoint stores stays as it stored it.
    t = await startTestApp({ env: { APP_ROLE: 'api' } });
  });
  afterAll(() => t.close());

  describe('URL validation', () => {
    it('answers the documented vector once the signature holds', async () => {
      const res = await sendZoomEvent(t.baseUrl, urlValidation('qgg8vlvZRS6UYooatFL8Aw'));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
        encryptedToken: '4efea922935c335d972476de138d2208a0d46ab28c79ee592d497a1b216419b8',
      });
    });

    it('is refused unsigned, so the endpoint is no signing oracle', async () => {
      const res = await request(t.baseUrl, 'POST', '/zoom/events', { body: urlValidation() });
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('4efea922');
    });

    it('needs a plainToken', async () => {
      const res = await sendZoomEvent(t.baseUrl, { ...urlValidation(), payload: {} });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { field: 'payload.plainToken', message: expect.stringContaining('plainToken') },
      ]);
    });
  });

  describe('refused with 401 and nothing stored', () => {
    const body = () => JSON.stringify(meetingStarted(meetingUuid()));
    const cases: [string, () => { body: string; headers: Record<string, string> }, RegExp][] = [
      [
        'a forged signature',
        () => ({ body: body(), headers: zoomHeaders('not-the-secret', body()) }),
        /does not match/,
      ],
      [
        'no headers at all',
        () => ({ body: body(), headers: { 'content-type': 'application/json' } }),
        /x-zm-request-timestamp header is missing/,
      ],
      [
        'no signature header',
        () => {
          const b = body();
          const headers = zoomHeaders(ZOOM_SECRET_TOKEN, b);
          delete headers['x-zm-signature'];
          return { body: b, headers };
        },
        /x-zm-signature header is missing/,
      ],
      [
        'a garbled signature header',
        () => {
          const b = body();
          return {
            body: b,
            headers: { ...zoomHeaders(ZOOM_SECRET_TOKEN, b), 'x-zm-signature': 'v0=zz' },
          };
        },
        /v0= and 64/,
      ],
      [
        'a stale timestamp',
        () => {
          const b = body();
          return { body: b, headers: zoomHeaders(ZOOM_SECRET_TOKEN, b, now() - 330) };
        },
        /more than 300 s/,
      ],
      [
        'a timestamp from the future',
        () => {
          const b = body();
          return { body: b, headers: zoomHeaders(ZOOM_SECRET_TOKEN, b, now() + 330) };
        },
        /more than 300 s/,
      ],
      [
        'a tampered body',
        () => {
          const b = body();
          return {
            body: b.replace('Bridge test', 'Bridge tesT'),
            headers: zoomHeaders(ZOOM_SECRET_TOKEN, b),
          };
        },
        /does not match/,
      ],
      [
        'malformed JSON without a valid signature',
        () => ({ body: '{"event": ', headers: zoomHeaders('wrong', '{"event": ') }),
        /does not match/,
      ],
    ];

    it.each(cases)('%s', async (_name, make, message) => {
      const { body: text, headers } = make();
      const res = await sendZoomEvent(t.baseUrl, text, { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: expect.stringMatching(message),
      });
      expect(await stored()).toEqual([]);
    });

    it('property: random mutations of a signed request are all refused (e2e sample)', async () => {
      const mutations = fc.oneof(
        fc.record({
          part: fc.constant('body' as const),
          at: fc.nat(),
          bit: fc.integer({ min: 0, max: 6 }),
        }),
        fc.record({
          part: fc.constant('timestamp' as const),
          delta: fc.integer({ min: -299, max: 299 }).filter((d) => d !== 0),
        }),
        fc.record({ part: fc.constant('signature' as const), at: fc.integer({ min: 3, max: 66 }) }),
        fc.record({
          part: fc.constant('secret' as const),
          secret: fc.string({ minLength: 1, maxLength: 40 }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(mutations, async (m) => {
          const bytes = Buffer.from(JSON.stringify(meetingStarted(meetingUuid())));
          const ts = now();
          let headers = zoomHeaders(ZOOM_SECRET_TOKEN, bytes, ts);
          if (m.part === 'body') {
            bytes[m.at % bytes.length] ^= 1 << m.bit;
          } else if (m.part === 'timestamp') {
            headers = { ...headers, 'x-zm-request-timestamp': String(ts + m.delta) };
          } else if (m.part === 'signature') {
            const sig = headers['x-zm-signature'];
            const swapped = sig[m.at] === '0' ? '1' : '0';
            headers = {
              ...headers,
              'x-zm-signature': sig.slice(0, m.at) + swapped + sig.slice(m.at + 1),
            };
          } else {
            fc.pre(m.secret !== ZOOM_SECRET_TOKEN);
            headers = zoomHeaders(m.secret, bytes, ts);
          }
          const res = await sendZoomEvent(t.baseUrl, bytes, { headers });
          return res.status === 401;
        }),
        { numRuns: 30 },
      );
      expect(await stored()).toEqual([]);
    });
  });

  describe('signed but malformed', () => {
    it('is 400 for malformed JSON', async () => {
      const res = await sendZoomEvent(t.baseUrl, '{"event": "meeting.started", ');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'Request body is not valid JSON',
      });
    });

    it('is 400 naming the fields for a JSON body that is no event', async () => {
      // A payload of any type is the platform's to send (it is stored); the event name is not.
      const res = await sendZoomEvent(t.baseUrl, { event: 42, payload: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['event']);
      expect((await sendZoomEvent(t.baseUrl, [1, 2])).status).toBe(400);
      const validation = await sendZoomEvent(t.baseUrl, {
        event: 'endpoint.url_validation',
        payload: null,
      });
      expect(validation.status).toBe(400);
      expect(validation.body.details).toEqual([
        { field: 'payload', message: 'payload must be an object' },
      ]);
      expect(await stored()).toEqual([]);
    });

    it('is 413 for a body over 1 MiB, before anything else', async () => {
      const res = await sendZoomEvent(t.baseUrl, 'x'.repeat(1024 * 1024 + 1));
      expect(res.status).toBe(413);
    });
  });

  describe('served outside Express: the same request id, log line and metrics', () => {
    interface Line {
      msg: string;
      req: { id: string; method: string; url: string; headers: Record<string, string> };
      res: { statusCode: number; headers: Record<string, string> };
      responseTime: number;
    }
    const completionLines = (id: string): Line[] =>
      t.logs
        .map((l) => JSON.parse(l) as Line)
        .filter((l) => l.req?.id === id && l.res !== undefined);
    const counted = (status: number) =>
      metricSample(
        t.baseUrl,
        `http_requests_total{method="POST",route="/zoom/events",status="${status}"}`,
      );

    it('writes one completion line per request with its id, whatever the outcome, and counts it', async () => {
      const run = Math.random().toString(36).slice(2, 10);
      const event = JSON.stringify(meetingStarted(meetingUuid()));
      const cases: [string, Record<string, string>, string, number][] = [
        ['accepted', zoomHeaders(ZOOM_SECRET_TOKEN, event), event, 200],
        ['unsigned', { 'content-type': 'application/json' }, event, 401],
        ['malformed', zoomHeaders(ZOOM_SECRET_TOKEN, '{"event":'), '{"event":', 400],
        ['too-large', { 'content-type': 'application/json' }, 'x'.repeat(1024 * 1024 + 1), 413],
      ];
      const before = new Map<number, number>();
      for (const [, , , status] of cases) before.set(status, await counted(status));
      for (const [name, headers, body, status] of cases) {
        const res = await request(t.baseUrl, 'POST', `/zoom/events?case=${name}`, {
          headers: { ...headers, 'x-request-id': `${run}-${name}` },
          body,
        });
        expect([name, res.status, res.headers.get('x-request-id')]).toEqual([
          name,
          status,
          `${run}-${name}`,
        ]);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        if (status !== 200) expect(res.body).toMatchObject({ statusCode: status });
      }
      for (const [name, headers, , status] of cases) {
        const lines = completionLines(`${run}-${name}`);
        expect([name, lines.length]).toEqual([name, 1]);
        expect(lines[0]).toMatchObject({
          msg: 'request completed',
          req: { method: 'POST', url: `/zoom/events?case=${name}` },
          res: { statusCode: status, headers: { 'x-request-id': `${run}-${name}` } },
          responseTime: expect.any(Number),
        });
        if (headers['x-zm-signature']) {
          expect(lines[0].req.headers['x-zm-signature']).toBe('[redacted]');
        }
        expect(await counted(status)).toBe(before.get(status)! + 1);
      }
      // A hostile request id is replaced, as on every other route.
      const res = await request(t.baseUrl, 'POST', '/zoom/events', {
        headers: { 'x-request-id': 'bad id\twith tab' },
        body: event,
      });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('records a compressed event (served by Express and Nest) as the fast path records a plain one', async () => {
      const run = Math.random().toString(36).slice(2, 10);
      const signed = (body: string) => zoomHeaders(ZOOM_SECRET_TOKEN, body);
      const unsigned = () => ({ 'content-type': 'application/json' });
      const cases: [string, (body: string) => Record<string, string>, () => string, number][] = [
        ['accepted', signed, () => JSON.stringify(meetingStarted(meetingUuid())), 200],
        ['unsigned', unsigned, () => JSON.stringify(meetingStarted(meetingUuid())), 401],
        ['too-large', unsigned, () => 'x'.repeat(1024 * 1024 + 1), 413],
      ];
      for (const [name, headersFor, bodyFor, status] of cases) {
        const before = await counted(status);
        const lines: CompletionLineJson[] = [];
        for (const gzip of [false, true]) {
          const body = bodyFor();
          const id = `${run}-${name}-${gzip ? 'express' : 'fast'}`;
          const res = await fetch(`${t.baseUrl}/zoom/events?case=${name}`, {
            method: 'POST',
            headers: {
              ...headersFor(body),
              'x-request-id': id,
              ...(gzip ? { 'content-encoding': 'gzip' } : {}),
            },
            body: gzip ? gzipSync(body) : body,
          });
          await res.arrayBuffer();
          expect([name, gzip, res.status]).toEqual([name, gzip, status]);
          const [line] = await waitFor(() => {
            const found = completionLines(id);
            return found.length > 0 && found;
          });
          lines.push(line as unknown as CompletionLineJson);
        }
        expect(comparableLine(lines[1])).toEqual(comparableLine(lines[0]));
        expect(await counted(status)).toBe(before + 2);
      }
    });
  });

  describe('storage and de-duplication', () => {
    it('stores an accepted event and answers 200 accepted', async () => {
      const uuid = meetingUuid();
      const res = await sendZoomEvent(t.baseUrl, meetingStarted(uuid));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'accepted' });
      const rows = await queryDatabase(
        t.database.url,
        `SELECT event, identity_key, event_ts, account_id FROM inbound_events WHERE identity_key = $1`,
        [JSON.stringify(['meeting.started', 'uuid', uuid])],
      );
      expect(rows).toEqual([
        {
          event: 'meeting.started',
          identity_key: JSON.stringify(['meeting.started', 'uuid', uuid]),
          event_ts: '1735725605123',
          account_id: 'AAAAAAAAAAAAAAAAAAAAAA',
        },
      ]);
    });

    it.each<[string, Record<string, unknown>]>([
      ['left out', {}],
      ['null', { payload: null }],
      ['a string', { payload: 'started' }],
      ['an array', { payload: [1, { object: {} }] }],
      ['a number', { payload: 42 }],
    ])(
      'stores a verified event whose payload is %s, answers 200 and counts it unmappable',
      async (_what, payload) => {
        const eventTs = Date.now() + Math.floor(Math.random() * 1e6);
        const body = { event: 'meeting.started', event_ts: eventTs, ...payload };
        const unmappable =
          'inbound_events_total{event="meeting.started",outcome="unmappable",via="webhook"}';
        const before = await metricSample(t.baseUrl, unmappable);
        const res = await sendZoomEvent(t.baseUrl, body);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 200,
          body: { status: 'accepted' },
        });
        const rows = await queryDatabase<{ payload: Record<string, unknown> }>(
          t.database.url,
          `SELECT payload FROM inbound_events WHERE event = 'meeting.started' AND event_ts = $1`,
          [eventTs],
        );
        expect(rows.map((r) => r.payload)).toEqual([body]);
        expect(await metricSample(t.baseUrl, unmappable)).toBe(before + 1);
        // A redelivery is one event still.
        expect((await sendZoomEvent(t.baseUrl, body)).body).toEqual({ status: 'duplicate' });
      },
    );

    describe('publishing in the statement that stores the event', () => {
      const receiver = { url: 'http://127.0.0.1:9/never-called' };
      const published = (uuid: string, event: string) =>
        queryDatabase<{ processed: boolean; kind: string | null; deliveries: number }>(
          t.database.url,
          `SELECT i.processed_at IS NOT NULL AS processed, e.kind,
             (SELECT count(*)::int FROM deliveries d WHERE d.event_id = e.id) AS deliveries
           FROM inbound_events i
           LEFT JOIN events e ON e.idempotency_key = 'inbound:' || i.id || ':' || $2
           WHERE i.identity_key = $1`,
          [
            JSON.stringify([event, 'uuid', uuid]),
            event === 'meeting.started' ? 'job.started' : 'job.completed',
          ],
        );

      it('has a mapped event published, with its deliveries, by the time it answers', async () => {
        const hooks = [
          await insertWebhook(t, { url: receiver.url, events: ['job.started'] }),
          await insertWebhook(t, { url: receiver.url, events: ['job.started'] }),
        ];
        try {
          const uuid = meetingUuid();
          expect((await sendZoomEvent(t.baseUrl, meetingStarted(uuid))).body).toEqual({
            status: 'accepted',
          });
          // No worker runs here (role api): only the request's own statement wrote these.
          expect(await published(uuid, 'meeting.started')).toEqual([
            { processed: true, kind: 'job.started', deliveries: 2 },
          ]);
          // A redelivery adds nothing.
          expect((await sendZoomEvent(t.baseUrl, meetingStarted(uuid))).body).toEqual({
            status: 'duplicate',
          });
          expect(await published(uuid, 'meeting.started')).toEqual([
            { processed: true, kind: 'job.started', deliveries: 2 },
          ]);
        } finally {
          for (const hook of hooks) await setActive(hook.id, false);
        }
      });

      it(`leaves an event that reaches more than ${INLINE_FANOUT_MAX} webhooks to the queue, which delivers it to each once`, async () => {
        const target = await startReceiver();
        const routes = Array.from({ length: INLINE_FANOUT_MAX + 1 }, () => target.route());
        const hooks = [];
        for (const route of routes) {
          hooks.push(await insertWebhook(t, { url: route.url, events: ['job.completed'] }));
        }
        let worker: TestApp | undefined;
        try {
          const uuid = meetingUuid();
          expect((await sendZoomEvent(t.baseUrl, meetingEnded(uuid))).body).toEqual({
            status: 'accepted',
          });
          // Stored only; the fan-out waits for a worker.
          expect(await published(uuid, 'meeting.ended')).toEqual([
            { processed: false, kind: null, deliveries: 0 },
          ]);
          worker = await startTestApp({
            database: t.database,
            queuePrefix: t.config.redis.prefix,
            env: { APP_ROLE: 'worker' },
          });
          // On a loaded machine this once ran past its deadline: the failure now says where
          // the event and its deliveries were.
          await waitFor(
            async () => {
              const missing = routes.filter((r) => target.requests(r.path).length === 0);
              if (missing.length === 0) return true;
              const deliveries = await queryDatabase(
                t.database.url,
                `SELECT status, count(*)::int AS n, max(attempt_count) AS most_attempts
                 FROM deliveries GROUP BY status`,
              );
              throw new Error(
                `${missing.length} not notified; inbound ` +
                  `${JSON.stringify(await published(uuid, 'meeting.ended'))}; deliveries ` +
                  JSON.stringify(deliveries),
              );
            },
            {
              timeoutMs: 50_000,
              intervalMs: 250,
              what: `every one of the ${routes.length} webhooks notified`,
            },
          );
          // One delivery each (an attempt cut short on a loaded machine may be retried).
          const deliveriesAt = (path: string) =>
            new Set(target.requests(path).map((r) => r.headers['x-service-delivery'])).size;
          expect(routes.map((r) => deliveriesAt(r.path))).toEqual(routes.map(() => 1));
          expect(await published(uuid, 'meeting.ended')).toEqual([
            { processed: true, kind: 'job.completed', deliveries: routes.length },
          ]);
        } finally {
          await worker?.close();
          for (const hook of hooks) await setActive(hook.id, false);
          await target.close();
        }
      }, 90_000);
    });

    it('stores the payload as sent, and one that is not UTF-8 as it was decoded', async () => {
      const uuid = meetingUuid();
      // A meeting named beyond ASCII, as people name them.
      const named = (id: string) => {
        const event = meetingStarted(id);
        (event.payload.object as { topic: string }).topic = 'Bridge test – Réunion ☕';
        return event;
      };
      // Spaced as no serialiser of ours would: the request's own bytes are what is stored.
      const exact = Buffer.from(JSON.stringify(named(uuid), null, 1), 'utf8');
      const broken = Buffer.from(
        JSON.stringify(named(`${uuid}-broken`)).replace('Réunion', 'Réunion XX'),
        'utf8',
      );
      broken[broken.indexOf('XX')] = 0xff;
      // The answers in full: on a loaded machine one run stored only the first of the two,
      // and a bare 200 could not say whether the second was taken for a duplicate.
      for (const body of [exact, broken]) {
        const answer = await sendZoomEvent(t.baseUrl, body);
        expect({ status: answer.status, body: answer.body }).toEqual({
          status: 200,
          body: { status: 'accepted' },
        });
      }
      const stored = await queryDatabase<{ text: string; topic: string }>(
        t.database.url,
        `SELECT payload::text AS text, payload->'payload'->'object'->>'topic' AS topic
         FROM inbound_events WHERE payload->'payload'->'object'->>'uuid' = ANY($1)
         ORDER BY received_at`,
        [[uuid, `${uuid}-broken`]],
      );
      expect(stored).toHaveLength(2);
      const [kept, decoded] = stored;
      expect(JSON.parse(kept.text)).toEqual(named(uuid));
      expect(decoded.topic).toBe('Bridge test – Réunion \uFFFDX ☕');
    });

    it('acknowledges a redelivery with other tokens and URLs as duplicate, storing it once', async () => {
      const uuid = meetingUuid();
      const first = recordingCompleted(uuid, 'download-token-one');
      const again = recordingCompleted(uuid, 'download-token-two');
      for (const f of (again.payload.object as { recording_files: { download_url: string }[] })
        .recording_files) {
        f.download_url += '?redelivered=1';
      }
      expect((await sendZoomEvent(t.baseUrl, first)).body).toEqual({ status: 'accepted' });
      const res = await sendZoomEvent(t.baseUrl, again);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'duplicate' });
      const rows = (await stored()).filter((r) => r.identity_key.includes(uuid));
      expect(rows).toHaveLength(1);
      // The download token is a credential: it is not kept.
      expect(JSON.stringify(rows[0].payload)).not.toContain('download-token');
      expect(rows[0].payload).toMatchObject({
        event: 'recording.completed',
        payload: { object: { uuid } },
      });
    });

    it('treats object.id as a number and as a string alike', async () => {
      const asNumber = meetingUpdated(998877);
      const asString = {
        ...meetingUpdated(998877),
        payload: { ...meetingUpdated().payload, object: { id: '998877', topic: 'Renamed' } },
      };
      expect((await sendZoomEvent(t.baseUrl, asNumber)).body).toEqual({ status: 'accepted' });
      expect((await sendZoomEvent(t.baseUrl, asString)).body).toEqual({ status: 'duplicate' });
    });

    it('stores concurrent redeliveries of one event exactly once', async () => {
      const event = meetingStarted(meetingUuid());
      const results = await Promise.all(
        Array.from({ length: 8 }, () => sendZoomEvent(t.baseUrl, event)),
      );
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(results.filter((r) => r.body.status === 'accepted')).toHaveLength(1);
    });

    it('stores an event with text jsonb cannot hold, and the events of its batch (docs/api.md#platform-events-post-zoomevents)', async () => {
      const odd = meetingStarted(meetingUuid());
      (odd.payload.object as Record<string, unknown>).topic = 'nul \u0000 inside \ud800';
      const good = [meetingStarted(meetingUuid()), meetingStarted(meetingUuid())];
      const [a, b, c] = await Promise.all(
        [good[0], odd, good[1]].map((e) => sendZoomEvent(t.baseUrl, e)),
      );
      expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
      const keys = (await stored()).map((r) => r.identity_key);
      for (const e of [...good, odd]) {
        expect(keys).toContain(
          JSON.stringify(['meeting.started', 'uuid', (e.payload.object as { uuid: string }).uuid]),
        );
      }
    });

    it('counts outcomes in /metrics', async () => {
      const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
      expect(text).toMatch(
        /inbound_events_total\{event="meeting.started",outcome="accepted",via="webhook"\} [1-9]/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="recording.completed",outcome="duplicate",via="webhook"\} 1/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="\(unverified\)",outcome="rejected",via="webhook"\} [1-9]/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="\(malformed\)",outcome="rejected",via="webhook"\} [1-9]/,
      );
    });

    it('answers 503 while the event store is unavailable, and stores nothing', async () => {
      await queryDatabase(
        t.database.url,
        'ALTER TABLE inbound_events RENAME TO inbound_events_away',
      );
      try {
        const res = await sendZoomEvent(t.baseUrl, meetingStarted(meetingUuid()));
        expect(res.status).toBe(503);
        expect(res.body.message).toMatch(/cannot be stored right now/);
        expect(JSON.stringify(res.body)).not.toMatch(/relation|SELECT|INSERT/);
      } finally {
        await queryDatabase(
          t.database.url,
          'ALTER TABLE inbound_events_away RENAME TO inbound_events',
        );
      }
      expect((await sendZoomEvent(t.baseUrl, meetingStarted(meetingUuid()))).status).toBe(200);
    });

    it('never logs the signature or the download token', () => {
      const logs = t.logs.join('\n');
      expect(logs).not.toContain('download-token-one');
      expect(logs).not.toMatch(/v0=[0-9a-f]{64}/);
    });
  });

  it('documents the endpoint, each platform example and each notification in Swagger', async () => {
    const doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    const op = doc.paths['/zoom/events'].post;
    expect(Object.keys(op.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '413', '503']),
    );
    // One example per platform event the mapping knows, plus the URL validation, each a
    // body of that very event.
    const examples = op.requestBody.content['application/json'].examples;
    expect(Object.keys(examples).sort()).toEqual(
      ['endpoint.url_validation', ...Object.keys(EVENT_MAPPING)].sort(),
    );
    for (const [event, example] of Object.entries<{ value: { event: string } }>(examples)) {
      expect(example.value.event).toBe(event);
    }
    expect(Object.keys(op.callbacks).sort()).toEqual([
      'follower.gained',
      'follower.lost',
      'job.completed',
      'job.started',
      'operation.complete',
      'operation.failed',
      'zoom.*',
    ]);
    // Swagger shows the catalog's own example of each kind (GET /api/event-types serves it).
    const model = doc.components.schemas.OperationCompleteNotification;
    expect(model.example).toEqual(EVENT_EXAMPLES['operation.complete']);
    expect(model.example.data.files[0]).toEqual(
      expect.objectContaining({
        file_type: 'MP4',
        download_url: expect.stringContaining('/download'),
      }),
    );
  });
});

describe('POST /zoom/events without ZOOM_WEBHOOK_SECRET_TOKEN', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { APP_ROLE: 'api', ZOOM_WEBHOOK_SECRET_TOKEN: '' } });
  });
  afterAll(() => t.close());

  it('answers 503 so the platform retries, signed or not, and stores nothing', async () => {
    for (const body of [meetingStarted(meetingUuid()), urlValidation()]) {
      const res = await sendZoomEvent(t.baseUrl, body);
      expect(res.status).toBe(503);
      expect(res.body.message).toMatch(/ZOOM_WEBHOOK_SECRET_TOKEN/);
    }
    expect(await queryDatabase(t.database.url, 'SELECT id FROM inbound_events')).toEqual([]);
  });
});
