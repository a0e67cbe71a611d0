import fc from 'fast-check';
import { EVENT_MAPPING } from '../src/inbound/event-mapping';
import { request } from './support/http';
import { queryDatabase } from './support/test-db';
import { TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { sendZoomEvent } from './support/zoom-sender';
import {
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
      const res = await sendZoomEvent(t.baseUrl, { event: 42, payload: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual(['event', 'payload']);
      expect((await sendZoomEvent(t.baseUrl, [1, 2])).status).toBe(400);
      expect(await stored()).toEqual([]);
    });

    it('is 413 for a body over 1 MiB, before anything else', async () => {
      const res = await sendZoomEvent(t.baseUrl, 'x'.repeat(1024 * 1024 + 1));
      expect(res.status).toBe(413);
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
        `SELECT event, identity_key, event_ts, account_id, processed_at FROM inbound_events WHERE identity_key = $1`,
        [JSON.stringify(['meeting.started', 'uuid', uuid])],
      );
      expect(rows).toEqual([
        {
          event: 'meeting.started',
          identity_key: JSON.stringify(['meeting.started', 'uuid', uuid]),
          event_ts: '1735725605123',
          account_id: 'AAAAAAAAAAAAAAAAAAAAAA',
          processed_at: null,
        },
      ]);
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

    it('refuses only the event PostgreSQL cannot store when it shares a batch with others', async () => {
      const bad = meetingStarted(meetingUuid());
      (bad.payload.object as Record<string, unknown>).topic = 'nul \u0000 inside';
      const good = [meetingStarted(meetingUuid()), meetingStarted(meetingUuid())];
      const [a, b, c] = await Promise.all(
        [good[0], bad, good[1]].map((e) => sendZoomEvent(t.baseUrl, e)),
      );
      expect([a.status, b.status, c.status]).toEqual([200, 400, 200]);
      expect(b.body.message).toBe('Event body holds values that cannot be stored');
      const keys = (await stored()).map((r) => r.identity_key);
      for (const e of good) {
        expect(keys).toContain(
          JSON.stringify(['meeting.started', 'uuid', (e.payload.object as { uuid: string }).uuid]),
        );
      }
    });

    it('counts outcomes in /metrics', async () => {
      const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
      expect(text).toMatch(
        /inbound_events_total\{event="meeting.started",outcome="accepted"\} [1-9]/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="recording.completed",outcome="duplicate"\} 1/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="\(unverified\)",outcome="rejected"\} [1-9]/,
      );
      expect(text).toMatch(
        /inbound_events_total\{event="\(malformed\)",outcome="rejected"\} [1-9]/,
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
    ]);
    const model = doc.components.schemas.OperationCompleteNotification;
    expect(model.example.data.files[0]).toEqual(
      expect.objectContaining({
        id: 'a1b2c3d4-0001',
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
