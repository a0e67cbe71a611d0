import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { getDelivery, waitForDeliveryStatus } from './support/deliveries';
import { deliveryFixture } from './support/delivery-fixture';
import { Json } from './support/http';
import { waitFor } from './support/wait-for';
import { createWebhook, setWebhookActive } from './support/webhooks';

/** docs/api.md#receiver-health: redelivery, replay (window, status, missed) and the test limit. */
describe('delivery control: redeliver, replay, test limit', () => {
  const fixture = deliveryFixture();
  const eventIds = (path: string) =>
    fixture.receiver
      .requests(path)
      .map((r) => (JSON.parse(r.body.toString()) as Json).id as string);

  describe('POST /api/webhooks/:id/deliveries/:deliveryId/redeliver', () => {
    it('sends a finished delivery again: same id and body, attempts counting on', async () => {
      const { t, receiver, dispatcher, token, api, metric } = fixture;
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url });
      const { deliveryIds } = await dispatcher.publish({ kind: 'job.started', data: { n: 1 } });
      const [id] = deliveryIds;
      await waitForDeliveryStatus(t, token, webhook.id, id, 'succeeded');
      const before = await metric('deliveries_redelivered_total{how="redeliver"}');

      const res = await api('POST', `/api/webhooks/${webhook.id}/deliveries/${id}/redeliver`);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        id,
        status: 'pending',
        attempt_count: 1,
        completed_at: null,
        requeued_by: 'redeliver',
        requeued_at: expect.any(String),
      });
      const done = await waitForDeliveryStatus(t, token, webhook.id, id, 'succeeded');
      expect(done.attempts.map((a: Json) => a.attempt)).toEqual([1, 2]);
      const [first, second] = receiver.requests(route.path);
      expect(second.headers['x-service-delivery']).toBe(id);
      // Standard Webhooks receivers de-duplicate on webhook-id: a redelivery keeps it.
      expect([first.headers['webhook-id'], second.headers['webhook-id']]).toEqual([id, id]);
      expect(second.headers['x-service-attempt']).toBe('2');
      expect(second.body.equals(first.body)).toBe(true);
      expect(await metric('deliveries_redelivered_total{how="redeliver"}')).toBe(before + 1);
    });

    it('answers 409 for a pending delivery, 404 for another client or an unknown delivery', async () => {
      const { t, receiver, dispatcher, api } = fixture;
      const route = receiver.route();
      receiver.hold(route.path);
      const webhook = await createWebhook(t, { url: route.url });
      const { deliveryIds } = await dispatcher.publish({ kind: 'job.started', data: {} });
      const [id] = deliveryIds;
      const pending = await api('POST', `/api/webhooks/${webhook.id}/deliveries/${id}/redeliver`);
      expect(pending.status).toBe(409);
      expect(pending.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
      receiver.release(route.path);

      const beta = await t.token('beta');
      const foreign = await api(
        'POST',
        `/api/webhooks/${webhook.id}/deliveries/${id}/redeliver`,
        undefined,
        beta,
      );
      expect(foreign.status).toBe(404);
      const unknown = await api(
        'POST',
        `/api/webhooks/${webhook.id}/deliveries/${randomUUID()}/redeliver`,
      );
      expect(unknown.body).toMatchObject({ statusCode: 404, message: 'Delivery not found' });
    });
  });

  describe('POST /api/webhooks/:id/replay', () => {
    it('recovers a receiver that was down for longer than the retry window with one replay', async () => {
      const { t, receiver, dispatcher, token, api } = fixture;
      // Every attempt of the three deliveries fails (4 each), then the receiver is back.
      const route = receiver.route({ statuses: [...Array(12).fill(503), 200] });
      const webhook = await createWebhook(t, { url: route.url });
      const since = new Date(Date.now() - 1000).toISOString();
      const ids: string[] = [];
      const events: string[] = [];
      for (let n = 0; n < 3; n++) {
        const published = await dispatcher.publish({ kind: 'job.started', data: { n } });
        ids.push(...published.deliveryIds);
        events.push(published.eventId);
      }
      for (const id of ids) await waitForDeliveryStatus(t, token, webhook.id, id, 'failed');

      const res = await api('POST', `/api/webhooks/${webhook.id}/replay`, { since });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ count: 3 });
      for (const id of ids) {
        const d = await waitForDeliveryStatus(t, token, webhook.id, id, 'succeeded');
        expect(d).toMatchObject({ attempt_count: 5, requeued_by: 'replay' });
      }
      const last = receiver.requests(route.path).slice(12);
      expect(last.map((r) => r.headers['x-service-delivery']).sort()).toEqual([...ids].sort());
      expect(eventIds(route.path).slice(12).sort()).toEqual([...events].sort());
      // Nothing failed is left in the window: a second replay queues nothing.
      expect((await api('POST', `/api/webhooks/${webhook.id}/replay`, { since })).body).toEqual({
        count: 0,
      });
    });

    it('replays succeeded deliveries of the window only, until excluded', async () => {
      const { t, receiver, dispatcher, token, api } = fixture;
      const route = receiver.route();
      const webhook = await createWebhook(t, { url: route.url });
      const since = new Date(Date.now() - 1000).toISOString();
      const { deliveryIds: inside } = await dispatcher.publish({ kind: 'job.started', data: {} });
      await waitForDeliveryStatus(t, token, webhook.id, inside[0], 'succeeded');
      const until = new Date(Date.now() + 5).toISOString();
      await waitFor(() => Date.now() > Date.parse(until) + 5);
      const { deliveryIds: after } = await dispatcher.publish({ kind: 'job.started', data: {} });
      await waitForDeliveryStatus(t, token, webhook.id, after[0], 'succeeded');

      const res = await api('POST', `/api/webhooks/${webhook.id}/replay`, {
        since,
        until,
        status: 'succeeded',
      });
      expect(res.body).toEqual({ count: 1 });
      await waitFor(() => receiver.requests(route.path).length === 3);
      expect((await getDelivery(t, token, webhook.id, after[0])).attempt_count).toBe(1);
    });

    it('with missed: delivers exactly the events an inactive webhook skipped, once', async () => {
      const { t, receiver, dispatcher, token, api } = fixture;
      const route = receiver.route();
      await dispatcher.publish({ kind: 'job.completed', data: { before: 'created' } });
      const webhook = await createWebhook(t, { url: route.url, events: ['job.completed'] });
      const since = new Date(Date.now() - 60_000).toISOString();
      await setWebhookActive(t, webhook.id, false);
      const skipped = [
        (await dispatcher.publish({ kind: 'job.completed', data: { n: 1 } })).eventId,
        (await dispatcher.publish({ kind: 'job.completed', data: { n: 2 } })).eventId,
      ];
      await dispatcher.publish({ kind: 'job.started', data: { other: 'kind' } });
      await setWebhookActive(t, webhook.id, true);
      const received = await dispatcher.publish({ kind: 'job.completed', data: { n: 3 } });
      await waitForDeliveryStatus(t, token, webhook.id, received.deliveryIds[0], 'succeeded');

      const res = await api('POST', `/api/webhooks/${webhook.id}/replay`, { since, missed: true });
      expect(res.body).toEqual({ count: 2 });
      await waitFor(() => receiver.requests(route.path).length === 3);
      expect(eventIds(route.path).slice(1).sort()).toEqual([...skipped].sort());
      const missed = await api('GET', `/api/webhooks/${webhook.id}/deliveries`);
      expect(
        missed.body.data
          .filter((d: Json) => d.requeued_by === 'missed')
          .map((d: Json) => d.event_id),
      ).toHaveLength(2);

      // Once: a second replay finds nothing missed.
      const again = await api('POST', `/api/webhooks/${webhook.id}/replay`, {
        since,
        missed: true,
      });
      expect(again.body).toEqual({ count: 0 });
      await waitFor(
        async () =>
          (await api('GET', `/api/webhooks/${webhook.id}/deliveries?status=pending`)).body.data
            .length === 0,
        { what: 'no pending delivery' },
      );
      expect(receiver.requests(route.path)).toHaveLength(3);
    });

    it('answers 400 naming the field, 409 while inactive, 404 for another client', async () => {
      const { t, receiver, api } = fixture;
      const webhook = await createWebhook(t, { url: receiver.route().url });
      const path = `/api/webhooks/${webhook.id}/replay`;
      const old = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
      const now = new Date().toISOString();
      for (const [body, field] of [
        [{}, 'since'],
        [{ since: 'yesterday' }, 'since'],
        [{ since: old }, 'since'],
        [{ since: now, until: now }, 'until'],
        // Would roll over into the next month (Date.parse), after since: a date that does not exist.
        [{ since: now, until: '2099-11-31T00:00:00Z' }, 'until'],
        [{ since: now, until: '2099-02-29T00:00:00Z' }, 'until'],
        [{ since: now, status: 'pending' }, 'status'],
        [{ since: now, missed: 'yes' }, 'missed'],
        [{ since: now, bogus: 1 }, 'bogus'],
      ] as const) {
        const res = await api('POST', path, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.details.map((d: Json) => d.field)).toContain(field);
      }
      const beta = await t.token('beta');
      expect((await api('POST', path, { since: now }, beta)).status).toBe(404);
      await setWebhookActive(t, webhook.id, false);
      const inactive = await api('POST', path, { since: now });
      expect(inactive.status).toBe(409);
    });
  });

  describe('POST /api/webhooks/:id/test limit', () => {
    it('allows 10 tests in 60 s per webhook, then 429 with Retry-After', async () => {
      const { t, receiver, api } = fixture;
      const webhook = await createWebhook(t, { url: receiver.route().url });
      const other = await createWebhook(t, { url: receiver.route().url });
      for (let i = 0; i < 10; i++) {
        expect((await api('POST', `/api/webhooks/${webhook.id}/test`)).status).toBe(202);
      }
      const refused = await api('POST', `/api/webhooks/${webhook.id}/test`);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect((await api('POST', `/api/webhooks/${other.id}/test`)).status).toBe(202);
      const rows = await t.app
        .get(DataSource)
        .query(`SELECT count(*)::int AS n FROM deliveries WHERE webhook_id = $1`, [webhook.id]);
      expect(rows[0].n).toBe(10);
    });
  });
});
