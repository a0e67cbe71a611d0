import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import {
  deactivateAllWebhooks,
  getDelivery,
  signatureVerifies,
  waitForDeliveryStatus,
} from './support/deliveries';
import { deliveryFixture } from './support/delivery-fixture';
import { Json } from './support/http';
import { waitFor } from './support/wait-for';
import { createWebhook, insertWebhook } from './support/webhooks';

/** The dispatcher's HTTP routes: a test notification, and the delivery log. */
describe('webhook test and delivery log routes (role all)', () => {
  const fixture = deliveryFixture();

  describe('POST /api/webhooks/:id/test', () => {
    it('answers 202 with the delivery and sends webhook.test to that webhook only', async () => {
      const { t, receiver, token, api } = fixture;
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url, events: ['follower.lost'] });
      const other = await createWebhook(t, {
        url: `${route.url}?other`,
        events: ['follower.lost'],
      });
      const res = await api('POST', `/api/webhooks/${webhook.id}/test`);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        id: expect.any(String),
        webhook_id: webhook.id,
        event: 'webhook.test',
        event_id: expect.any(String),
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: expect.any(String),
        last_status_code: null,
        last_error: null,
        created_at: expect.any(String),
        completed_at: null,
        requeued_by: null,
        requeued_at: null,
      });
      const done = await waitForDeliveryStatus(t, token, webhook.id, res.body.id, 'succeeded');
      const [req] = receiver.requests(route.path);
      expect(req.headers['x-service-event']).toBe('webhook.test');
      expect(signatureVerifies(webhook.secret, req)).toBe(true);
      expect(JSON.parse(req.body.toString())).toMatchObject({
        id: res.body.event_id,
        event: 'webhook.test',
        data: { webhook_id: webhook.id },
        source: null,
      });
      expect(done.payload.event).toBe('webhook.test');
      expect(receiver.requests(`${route.path}?other`)).toHaveLength(0);
      expect((await api('GET', `/api/webhooks/${other.id}/deliveries`)).body.data).toEqual([]);
    });

    it('answers 409 for an inactive webhook and queues nothing', async () => {
      const { t, receiver, api } = fixture;
      const webhook = await createWebhook(t, { url: receiver.route().url, active: false });
      const res = await api('POST', `/api/webhooks/${webhook.id}/test`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
      expect((await api('GET', `/api/webhooks/${webhook.id}/deliveries`)).body.data).toEqual([]);
    });

    it('answers 404 for a webhook of another client, 400 for a bad id, 401/403 without the scope', async () => {
      const { t, receiver, api } = fixture;
      const beta = await t.token('beta');
      const db = t.app.get(DataSource);
      const deliveryRows = (webhookId: string) =>
        db.query(`SELECT id FROM deliveries WHERE webhook_id = $1`, [webhookId]);
      const testEvents = (webhookId: string) =>
        db.query(`SELECT id FROM events WHERE kind = 'webhook.test' AND data->>'webhook_id' = $1`, [
          webhookId,
        ]);
      const theirs = await createWebhook(t, { url: receiver.route().url, client: 'beta' });
      const absent = await api('POST', `/api/webhooks/${randomUUID()}/test`);
      expect(absent.body).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'Webhook not found',
      });
      const refused = await api('POST', `/api/webhooks/${theirs.id}/test`);
      // Indistinguishable from an id that does not exist, and nothing queued for it.
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 404,
        body: absent.body,
      });
      expect(await deliveryRows(theirs.id)).toEqual([]);
      expect(await testEvents(theirs.id)).toEqual([]);
      expect(
        (await api('GET', `/api/webhooks/${theirs.id}/deliveries`, undefined, beta)).body,
      ).toEqual({
        data: [],
        next_cursor: null,
      });
      const bad = await api('POST', '/api/webhooks/not-a-uuid/test');
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
      const mine = await createWebhook(t, { url: receiver.route().url });
      expect((await api('POST', `/api/webhooks/${mine.id}/test`, undefined, '')).status).toBe(401);
      const reader = await t.token('reader');
      const readers = await insertWebhook(t, { url: receiver.route().url, client: 'reader' });
      expect(
        (await api('POST', `/api/webhooks/${readers.id}/test`, undefined, reader)).status,
      ).toBe(403);
      expect(
        (await api('GET', `/api/webhooks/${readers.id}/deliveries`, undefined, reader)).status,
      ).toBe(200);
    });
  });

  describe('delivery log', () => {
    let webhook: { id: string };
    let ids: string[]; // oldest first

    beforeAll(async () => {
      const { t, receiver, dispatcher, token } = fixture;
      await deactivateAllWebhooks(t);
      const route = receiver.route({ statuses: [200, 200, 500] });
      webhook = await createWebhook(t, {
        url: route.url,
        events: ['job.started', 'job.completed'],
      });
      ids = [];
      for (const kind of ['job.started', 'job.completed', 'job.started'] as const) {
        const { deliveryIds } = await dispatcher.publish({ kind, data: { kind } });
        ids.push(...deliveryIds);
        // One at a time, so the receiver answers them in order (200, 200, then 500s).
        await waitFor(async () => {
          const d = await getDelivery(t, token, webhook.id, deliveryIds[0]);
          return d.status !== 'pending' && d;
        });
      }
    });

    it('lists newest first with status and event filters', async () => {
      const { api } = fixture;
      const all = await api('GET', `/api/webhooks/${webhook.id}/deliveries`);
      expect(all.status).toBe(200);
      expect(all.body.data.map((d: Json) => d.id)).toEqual([...ids].reverse());
      expect(all.body.next_cursor).toBeNull();
      expect(Object.keys(all.body.data[0]).sort()).toEqual(
        [
          'attempt_count',
          'completed_at',
          'created_at',
          'event',
          'event_id',
          'id',
          'last_error',
          'last_status_code',
          'next_attempt_at',
          'requeued_at',
          'requeued_by',
          'status',
          'webhook_id',
        ].sort(),
      );
      const failed = await api('GET', `/api/webhooks/${webhook.id}/deliveries?status=failed`);
      expect(failed.body.data.map((d: Json) => d.id)).toEqual([ids[2]]);
      const completed = await api(
        'GET',
        `/api/webhooks/${webhook.id}/deliveries?event=job.completed&status=succeeded`,
      );
      expect(completed.body.data.map((d: Json) => d.id)).toEqual([ids[1]]);
    });

    it('pages with limit and cursor', async () => {
      const { api } = fixture;
      const first = await api('GET', `/api/webhooks/${webhook.id}/deliveries?limit=2`);
      expect(first.body.data.map((d: Json) => d.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const second = await api(
        'GET',
        `/api/webhooks/${webhook.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`,
      );
      expect(second.body).toEqual({
        data: [expect.objectContaining({ id: ids[0] })],
        next_cursor: null,
      });
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['status=done', 'status'],
      ['event=meeting.started', 'event'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['bogus=1', 'bogus'],
    ])('answers 400 naming the field for %s', async (query, field) => {
      const { api } = fixture;
      const res = await api('GET', `/api/webhooks/${webhook.id}/deliveries?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: Json) => d.field)).toContain(field);
    });

    it('shows one delivery with its payload and attempts', async () => {
      const { api } = fixture;
      const res = await api('GET', `/api/webhooks/${webhook.id}/deliveries/${ids[2]}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: ids[2],
        status: 'failed',
        attempt_count: 4,
        payload: { event: 'job.started', data: { kind: 'job.started' } },
      });
      expect(res.body.attempts).toHaveLength(4);
      expect(Object.keys(res.body.attempts[0]).sort()).toEqual(
        ['attempt', 'duration_ms', 'error', 'response_body', 'started_at', 'status_code'].sort(),
      );
    });

    it('hides the log from other clients and answers 404 for a delivery of another webhook', async () => {
      const { t, receiver, api } = fixture;
      const beta = await t.token('beta');
      const absentId = randomUUID();
      for (const suffix of ['/deliveries', `/deliveries/${ids[0]}`]) {
        const absent = await api('GET', `/api/webhooks/${absentId}${suffix}`, undefined, beta);
        expect(absent.body).toEqual({
          statusCode: 404,
          error: 'Not Found',
          message: 'Webhook not found',
        });
        const refused = await api('GET', `/api/webhooks/${webhook.id}${suffix}`, undefined, beta);
        expect({ suffix, status: refused.status, body: refused.body }).toEqual({
          suffix,
          status: 404,
          body: absent.body,
        });
      }
      const other = await createWebhook(t, { url: receiver.route().url });
      const res = await api('GET', `/api/webhooks/${other.id}/deliveries/${ids[0]}`);
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Delivery not found');
      const bad = await api('GET', `/api/webhooks/${webhook.id}/deliveries/123`);
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual([
        { field: 'deliveryId', message: 'deliveryId must be a UUID' },
      ]);
    });
  });
});
