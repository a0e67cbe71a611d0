import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import type { DeliverJobData } from '../src/dispatcher/publish/delivery-job';
import { QUEUES } from '../src/queue/queue.constants';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { SubscriptionEvent } from '../src/webhooks/subscription-events';
import { Json, metricSample, request } from './support/http';
import {
  deactivateAllWebhooks,
  getDelivery,
  signatureVerifies,
  waitForDeliveryStatus,
} from './support/deliveries';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook, deleteWebhook, insertWebhook, setWebhookActive } from './support/webhooks';

const VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;
// Long enough that a local receiver's prompt answer is never cut on a loaded 2-core machine;
// the timeout cases hold their answer for several timeouts instead.
const TIMEOUT_MS = 2000;

describe('dispatcher (role all)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let dispatcher: DispatcherService;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({
      env: { DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_SWEEP_INTERVAL_MS: '300' },
    });
    receiver = await startReceiver();
    dispatcher = t.app.get(DispatcherService);
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });
  beforeEach(() => deactivateAllWebhooks(t));

  const api = (method: string, path: string, client = token) =>
    request(t.baseUrl, method, path, { token: client });
  const delivery = (webhookId: string, deliveryId: string) =>
    getDelivery(t, token, webhookId, deliveryId);
  const waitForStatus = (webhookId: string, deliveryId: string, status: string) =>
    waitForDeliveryStatus(t, token, webhookId, deliveryId, status);
  const publishTo = async (
    url: string,
    kind: SubscriptionEvent = 'job.started',
    data: object = { n: 1 },
  ) => {
    const webhook = await createWebhook(t, { url, events: [kind] });
    const { eventId, deliveryIds } = await dispatcher.publish({
      kind,
      data: data as Record<string, unknown>,
    });
    expect(deliveryIds).toHaveLength(1);
    return { webhook, eventId, deliveryId: deliveryIds[0] };
  };
  const metric = (sample: string) => metricSample(t.baseUrl, sample);
  const sweepsCompleted = () => metric('delivery_sweeps_total{outcome="completed"}');
  /** Waits until a sweep that began after this call has completed. */
  const aWholeSweep = async () => {
    // The first one counted may have been under way already; the second began afterwards.
    const before = await sweepsCompleted();
    await waitFor(async () => (await sweepsCompleted()) >= before + 2, {
      what: 'the sweeper to complete a whole sweep',
    });
  };

  describe('publish and the notification', () => {
    it('sends the documented body and headers (docs/api.md#notifications), signed over the exact bytes', async () => {
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url, events: ['follower.gained'] });
      const source = {
        platform: 'zoom' as const,
        event: 'meeting.participant_joined',
        event_ts: 1735725605123,
        account_id: 'acct-1',
        tracking_id: null,
        via: 'webhook' as const,
      };
      // Whole, as the mapping builds it: the receiver holds every body to its kind's schema.
      const data = {
        id: '85746065432',
        uuid: 'aDYlohsHRtCd4ii1uC2+hA==',
        topic: 'Grüße 🎉 "quoted" \\ nul:\u0000',
        host_id: 'host-1',
        participant: { id: 'p1' },
      };
      const { eventId, deliveryIds } = await dispatcher.publish({
        kind: 'follower.gained',
        data,
        source,
      });

      const [req] = await waitFor(
        () => receiver.requests(route.path).length === 1 && receiver.requests(route.path),
      );
      expect(signatureVerifies(webhook.secret, req)).toBe(true);
      expect(signatureVerifies('another-secret-0123456789', req)).toBe(false);
      expect(req.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(req.headers).toMatchObject({
        'content-type': 'application/json',
        'x-service-event': 'follower.gained',
        'x-service-delivery': deliveryIds[0],
        'x-service-attempt': '1',
        'user-agent': `meeting-event-bridge/${VERSION}`,
      });
      const body = JSON.parse(req.body.toString('utf8'));
      expect(Object.keys(body)).toEqual(['id', 'event', 'created_at', 'data', 'source']);
      expect(body).toEqual({
        id: eventId,
        event: 'follower.gained',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data,
        source,
      });

      const done = await waitForStatus(webhook.id, deliveryIds[0], 'succeeded');
      // The attempts' errors are in the comparison so that a failed first attempt says why.
      expect({
        attempt_count: done.attempt_count,
        errors: (done.attempts as Json[]).map((a) => a.error),
      }).toEqual({ attempt_count: 1, errors: [null] });
      expect(done).toMatchObject({
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
        event_id: eventId,
      });
      expect(done.payload).toEqual(body);
    });

    it('fans out to the active webhooks subscribed to the kind, and only those', async () => {
      const route = receiver.route();
      const a = await createWebhook(t, { url: `${route.url}?a`, events: ['job.completed'] });
      const b = await createWebhook(t, {
        url: `${route.url}?b`,
        events: ['follower.lost', 'job.completed'],
        client: 'beta',
      });
      await createWebhook(t, { url: `${route.url}?other-kind`, events: ['job.started'] });
      await createWebhook(t, {
        url: `${route.url}?inactive`,
        events: ['job.completed'],
        active: false,
      });
      const { eventId, deliveryIds } = await dispatcher.publish({
        kind: 'job.completed',
        data: {},
      });
      expect(deliveryIds).toHaveLength(2);
      const rows: { webhook_id: string }[] = await t.app
        .get(DataSource)
        .query(`SELECT webhook_id FROM deliveries WHERE event_id = $1`, [eventId]);
      expect(rows.map((r) => r.webhook_id).sort()).toEqual([a.id, b.id].sort());
      const got = await waitFor(
        () =>
          receiver.received.filter((r) => r.path.startsWith(route.path)).length === 2 &&
          receiver.received.filter((r) => r.path.startsWith(route.path)),
      );
      expect(got.map((r) => r.path.split('?')[1]).sort()).toEqual(['a', 'b']);
    });

    it('gives each of many concurrent publishes its own event and deliveries', async () => {
      const route = receiver.route();
      const started = await createWebhook(t, { url: `${route.url}?s`, events: ['job.started'] });
      const completed = await createWebhook(t, {
        url: `${route.url}?c`,
        events: ['job.completed', 'job.started'],
      });
      const kinds: SubscriptionEvent[] = ['job.started', 'job.completed', 'follower.lost'];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          dispatcher.publish({ kind: kinds[n % 3], data: { n } }),
        ),
      );
      const db = t.app.get(DataSource);
      for (const [n, result] of results.entries()) {
        // The body every delivery of the event sends is stored once, on the event.
        const rows: { id: string; webhook_id: string; body: string }[] = await db.query(
          `SELECT d.id, d.webhook_id, e.body FROM deliveries d JOIN events e ON e.id = d.event_id
           WHERE d.event_id = $1`,
          [result.eventId],
        );
        expect(rows.map((r) => r.id).sort()).toEqual([...result.deliveryIds].sort());
        const expected = [[started.id, completed.id], [completed.id], []][n % 3];
        expect(rows.map((r) => r.webhook_id).sort()).toEqual([...expected].sort());
        for (const row of rows)
          expect(JSON.parse(row.body)).toMatchObject({ id: result.eventId, data: { n } });
      }
      expect(new Set(results.map((r) => r.eventId)).size).toBe(12);
    });

    it('publishes an idempotency key once, however often it is called', async () => {
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
      const input = {
        kind: 'job.started' as const,
        data: { n: 1 },
        idempotencyKey: `key-${webhook.id}`,
      };
      const first = await dispatcher.publish(input);
      const again = await Promise.all([dispatcher.publish(input), dispatcher.publish(input)]);
      expect(again).toEqual([first, first]);
      const [{ count }] = await t.app
        .get(DataSource)
        .query(`SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = $1`, [webhook.id]);
      expect(count).toBe(1);
      await waitForStatus(webhook.id, first.deliveryIds[0], 'succeeded');
      expect(receiver.requests(route.path)).toHaveLength(1);
    });

    it('refuses a kind that is not a subscription event, from an untyped caller', async () => {
      // @ts-expect-error: the type already refuses it; the check guards untyped callers
      await expect(dispatcher.publish({ kind: 'meeting.started', data: {} })).rejects.toThrow(
        /not a subscription or platform event kind/,
      );
      // @ts-expect-error: the test event is sent only by publishTest
      await expect(dispatcher.publish({ kind: 'webhook.test', data: {} })).rejects.toThrow();
    });

    it('sends consecutive deliveries to one origin over one kept-alive connection', async () => {
      // A receiver of its own: the shared one's origin has connections from earlier cases.
      const own = await startReceiver();
      try {
        const route = own.route();
        const webhook = await createWebhook(t, { url: route.url, events: ['job.completed'] });
        for (let n = 0; n < 3; n++) {
          const { deliveryIds } = await dispatcher.publish({ kind: 'job.completed', data: { n } });
          await waitForStatus(webhook.id, deliveryIds[0], 'succeeded');
        }
        const reqs = own.requests(route.path);
        expect(reqs).toHaveLength(3);
        expect(new Set(reqs.map((r) => r.remotePort)).size).toBe(1);
        expect(own.connections).toBe(1);
      } finally {
        await own.close();
      }
    });
  });

  describe('attempts and retries', () => {
    it('500, 500, 200: succeeded after 3 attempts, same delivery id and bytes, attempt counting up', async () => {
      const route = receiver.route({ statuses: [500, 500, 200], body: 'receiver says hi' });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');

      const reqs = receiver.requests(route.path);
      expect(reqs.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3']);
      expect(new Set(reqs.map((r) => r.headers['x-service-delivery']))).toEqual(
        new Set([deliveryId]),
      );
      expect(new Set(reqs.map((r) => r.body.toString('hex'))).size).toBe(1);
      expect(new Set(reqs.map((r) => r.headers['x-service-signature'])).size).toBe(1);
      expect(reqs.every((r) => signatureVerifies(webhook.secret, r))).toBe(true);

      expect(done).toMatchObject({
        attempt_count: 3,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
        completed_at: expect.any(String),
      });
      expect(done.attempts).toEqual([
        expect.objectContaining({ attempt: 1, status_code: 500, error: 'HTTP 500' }),
        expect.objectContaining({ attempt: 2, status_code: 500, error: 'HTTP 500' }),
        {
          attempt: 3,
          started_at: expect.any(String),
          duration_ms: expect.any(Number),
          status_code: 200,
          error: null,
          response_body: 'receiver says hi',
        },
      ]);
      const retryLogs = t.logs.filter((l) => l.includes(deliveryId) && l.includes('will retry'));
      expect(retryLogs).toHaveLength(2);
    });

    it('always failing: exactly 1 + 3 requests, then failed, and nothing more', async () => {
      const route = receiver.route({ statuses: [503] });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'failed');
      expect(done).toMatchObject({
        attempt_count: 4,
        last_status_code: 503,
        last_error: 'HTTP 503',
        next_attempt_at: null,
      });
      expect(done.attempts.map((a: Json) => a.attempt)).toEqual([1, 2, 3, 4]);
      expect(
        t.logs.some((l) => l.includes(deliveryId) && l.includes('final, delivery marked failed')),
      ).toBe(true);
      expect(receiver.requests(route.path).map((r) => r.headers['x-service-attempt'])).toEqual([
        '1',
        '2',
        '3',
        '4',
      ]);
      // Nor does the sweeper send it again.
      await aWholeSweep();
      expect(receiver.requests(route.path)).toHaveLength(4);
      expect(await delivery(webhook.id, deliveryId)).toMatchObject({
        status: 'failed',
        attempt_count: 4,
      });
    });

    it('counts an answer slower than DELIVERY_TIMEOUT_MS as a failed attempt', async () => {
      const route = receiver.route({ delaysMs: [TIMEOUT_MS * 3, 0] });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      expect(done.attempts).toHaveLength(2);
      expect(done.attempts[0]).toMatchObject({
        status_code: null,
        error: `timed out after ${TIMEOUT_MS} ms`,
        response_body: null,
      });
      expect(done.attempts[0].duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      expect(receiver.requests(route.path)).toHaveLength(2);
    });

    it('counts a 2xx whose body is still arriving at DELIVERY_TIMEOUT_MS as a timed-out attempt', async () => {
      // The status line comes at once; the body trickles for three timeouts, never idle long
      // enough for a per-read timeout to notice: only the attempt's own deadline can.
      const route = receiver.route({ body: 'trickled body', trickleMs: [TIMEOUT_MS * 3, 0] });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      expect(done.attempt_count).toBe(2);
      expect(done.attempts[0]).toMatchObject({
        attempt: 1,
        status_code: 200,
        error: `timed out after ${TIMEOUT_MS} ms reading the response body`,
      });
      expect('trickled body'.startsWith(done.attempts[0].response_body)).toBe(true);
      expect(done.attempts[0].duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
      // Cut by the deadline, not by the body's end.
      expect(done.attempts[0].duration_ms).toBeLessThan(TIMEOUT_MS * 3);
      expect(done.attempts[1]).toMatchObject({ status_code: 200, error: null });
      expect(receiver.requests(route.path).map((r) => r.headers['x-service-attempt'])).toEqual([
        '1',
        '2',
      ]);
      expect(
        t.logs.some(
          (l) => l.includes(deliveryId) && l.includes('timed out') && l.includes('will retry'),
        ),
      ).toBe(true);
    });

    it('does not follow redirects: a 3xx is a failed attempt', async () => {
      const target = receiver.route({}, 'redirect-target');
      const route = receiver.route({ statuses: [302, 200], headers: { location: target.url } });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      expect(done.attempts[0]).toMatchObject({
        status_code: 302,
        error: 'HTTP 302: redirects are not followed',
      });
      expect(receiver.requests(target.path)).toHaveLength(0);
    });

    it('keeps only the first 1 KiB of an answer, NUL bytes included', async () => {
      const answer = Buffer.concat([Buffer.from('a\u0000b'), Buffer.alloc(5000, 'z')]);
      const route = receiver.route({ statuses: [500, 200], body: answer });
      const { webhook, deliveryId } = await publishTo(route.url);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      // The first 1024 bytes as received; a NUL (which PostgreSQL text cannot hold) reads U+FFFD.
      expect(done.attempts[0].response_body).toBe(`a\uFFFDb${'z'.repeat(1021)}`);
    });

    it('sends a pending retry of a deactivated webhook nothing: the delivery ends failed', async () => {
      const route = receiver.route({ statuses: [500] });
      receiver.hold(route.path);
      const { webhook, deliveryId } = await publishTo(route.url);
      await waitFor(() => receiver.requests(route.path).length === 1);
      await setWebhookActive(t, webhook.id, false);
      receiver.release(route.path); // attempt 1 fails; its retry finds the webhook inactive
      const done = await waitForStatus(webhook.id, deliveryId, 'failed');
      expect(done).toMatchObject({
        attempt_count: 1,
        last_error: 'webhook is inactive: delivery cancelled, not sent',
      });
      expect(receiver.requests(route.path)).toHaveLength(1);
    });

    it('sends a deleted webhook nothing further', async () => {
      const route = receiver.route({ statuses: [500] });
      receiver.hold(route.path);
      const { webhook } = await publishTo(route.url);
      await waitFor(() => receiver.requests(route.path).length === 1);
      await deleteWebhook(t, webhook.id);
      receiver.release(route.path);
      // Its retry would have been due long before a whole sweep has run.
      await aWholeSweep();
      expect(receiver.requests(route.path)).toHaveLength(1);
      expect((await api('GET', `/api/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    });
  });

  describe('no loss', () => {
    it('delivers a committed delivery that never reached the queue', async () => {
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
      // What a publish leaves behind when Redis was unreachable right after its commit.
      const [{ id }] = await t.app.get(DataSource).query(
        `WITH ev AS (INSERT INTO events (kind, data) VALUES ('job.started', '{}') RETURNING id)
         INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at)
         SELECT $1, ev.id, 'job.started', '{"lost":true}', now() FROM ev RETURNING id`,
        [webhook.id],
      );
      await waitForStatus(webhook.id, id, 'succeeded');
      const reqs = receiver.requests(route.path);
      expect(reqs.map((r) => [r.headers['x-service-delivery'], r.body.toString()])).toEqual([
        [id, '{"lost":true}'],
      ]);
    });

    it('re-queues a pending delivery whose job Bull had already finished', async () => {
      const route = receiver.route({ statuses: [500, 500, 500, 500, 200] });
      const { webhook, deliveryId } = await publishTo(route.url);
      await waitForStatus(webhook.id, deliveryId, 'failed');
      // As if Bull gave up on the job while the record still said pending.
      await t.app.get(DataSource).query(
        `UPDATE deliveries SET status = 'pending', attempt_count = 3, completed_at = NULL,
           next_attempt_at = now() WHERE id = $1`,
        [deliveryId],
      );
      await t.app
        .get(DataSource)
        .query(`DELETE FROM delivery_attempts WHERE delivery_id = $1 AND attempt = 4`, [
          deliveryId,
        ]);
      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      expect(done.attempt_count).toBe(4);
      expect(receiver.requests(route.path)).toHaveLength(5);
    });

    it('sends a retry whose delayed job Redis lost: the sweeper queues it once overdue', async () => {
      // 503 with Retry-After: 2 s makes the retry's job wait long enough to be taken away.
      const route = receiver.route({ statuses: [503, 200], headers: { 'retry-after': '2' } });
      const { webhook, deliveryId } = await publishTo(route.url);
      const queue = t.app.get<Queue<DeliverJobData>>(getQueueToken(QUEUES.deliveries));
      const retryJob = async () =>
        (await queue.getDelayed()).find((job) => job.data.deliveryIds.includes(deliveryId));
      const lost = await waitFor(retryJob, { what: `the delayed retry job of ${deliveryId}` });
      await lost.remove();
      expect(await retryJob()).toBeUndefined();
      expect((await delivery(webhook.id, deliveryId)).status).toBe('pending');

      const done = await waitForStatus(webhook.id, deliveryId, 'succeeded');
      expect(done.attempt_count).toBe(2);
      expect(receiver.requests(route.path).map((r) => r.headers['x-service-attempt'])).toEqual([
        '1',
        '2',
      ]);
    });

    it('leaves a delivery that a live worker holds to it, and re-queues it once the lease lapses', async () => {
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url, events: ['job.started'] });
      // Overdue by far, but leased: as a worker holds a delivery while its attempt is under way.
      const [{ id }] = await t.app.get(DataSource).query(
        `WITH ev AS (INSERT INTO events (kind, data) VALUES ('job.started', '{}') RETURNING id)
         INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at, lease_until)
         SELECT $1, ev.id, 'job.started', '{"held":true}', now() - interval '1 hour',
           now() + interval '2 seconds'
         FROM ev RETURNING id`,
        [webhook.id],
      );
      const requeuedBefore = await metric('deliveries_requeued_total');
      const logsFrom = t.logs.length;
      await aWholeSweep();
      await aWholeSweep();
      expect(receiver.requests(route.path)).toEqual([]);
      expect(await metric('deliveries_requeued_total')).toBe(requeuedBefore);

      // The holder never recorded an attempt (it died): once the lease lapses, a sweep takes it.
      const done = await waitForStatus(webhook.id, id, 'succeeded');
      expect(done.attempt_count).toBe(1);
      expect(receiver.requests(route.path).map((r) => r.headers['x-service-delivery'])).toEqual([
        id,
      ]);
      expect(await metric('deliveries_requeued_total')).toBe(requeuedBefore + 1);
      expect(
        t.logs
          .slice(logsFrom)
          .filter((l) => /re-queued 1 due deliveries that no worker held/.test(l)),
      ).toHaveLength(1);
    });
  });

  it('counts deliveries and attempt durations in /metrics', async () => {
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(text).toMatch(/deliveries_total\{outcome="succeeded",destination="http"\} [1-9]/);
    expect(text).toMatch(/deliveries_total\{outcome="failed",destination="http"\} [1-9]/);
    expect(text).toMatch(
      /delivery_attempt_duration_seconds_count\{outcome="failure",destination="http"\} [1-9]/,
    );
  });
});

describe('dispatcher with WEBHOOK_ALLOW_PRIVATE_URLS=false', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it.each([
    ['an address', (url: string) => url],
    ['a name', (url: string) => url.replace('127.0.0.1', 'localhost')],
  ])(
    'checks the URL again at delivery time: %s that is private fails without a request',
    async (_, toUrl) => {
      const route = receiver.route();
      // Stored while private URLs were allowed (or DNS pointed elsewhere).
      const webhook = await insertWebhook(t, { url: toUrl(route.url), events: ['job.started'] });
      const { deliveryIds } = await t.app
        .get(DispatcherService)
        .publish({ kind: 'job.started', data: {} });
      const token = await t.token();
      const done = await waitFor(async () => {
        const res = await request(
          t.baseUrl,
          'GET',
          `/api/webhooks/${webhook.id}/deliveries/${deliveryIds[0]}`,
          { token },
        );
        return res.body.status === 'failed' && res.body;
      });
      expect(done.attempts).toHaveLength(4);
      for (const attempt of done.attempts) {
        expect(attempt).toMatchObject({ status_code: null, response_body: null });
        expect(attempt.error).toMatch(
          /resolves to (127\.0\.0\.1|::1), a private or special-purpose address/,
        );
      }
      expect(receiver.requests(route.path)).toHaveLength(0);
      await setWebhookActive(t, webhook.id, false); // out of the next case's fan-out
    },
  );
});
