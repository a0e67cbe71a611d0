import { TestContext, newTestService } from '../../../test/fakes/new-test-service';
import { DispatcherService } from './dispatcher.service';

describe('DispatcherService', () => {
  let t: TestContext<DispatcherService>;

  beforeEach(async () => {
    t = await newTestService(DispatcherService);
  });

  it('fans an event out to the active webhooks subscribed to its kind, and queues each', async () => {
    const subscribed = t.tables.addWebhook({ events: ['job.started', 'job.completed'] });
    t.tables.addWebhook({ events: ['job.completed'] });
    t.tables.addWebhook({ events: ['job.started'], active: false });

    const result = await t.sut.publish({ kind: 'job.started', data: { n: 1 } });

    expect(result.deliveryIds).toHaveLength(1);
    expect(t.tables.delivery(result.deliveryIds[0]).webhookId).toBe(subscribed.id);
    expect(t.deliveriesQueue.deliveryIds()).toEqual(result.deliveryIds);
  });

  it('queues the deliveries of concurrent callers in shared jobs of at most 50', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `delivery-${i}`);
    const routes = ids.map((id) => ({ id, webhookId: 'webhook-1' }));
    // Resolved once their jobs are added: both callers' deliveries lingered into one add.
    await Promise.all([
      t.sut.queueDeliveries(routes.slice(0, 70)),
      t.sut.queueDeliveries(routes.slice(70)),
    ]);
    expect(
      t.deliveriesQueue.added.map(
        (job) => (job.data as { deliveryIds: string[] }).deliveryIds.length,
      ),
    ).toEqual([50, 50, 20]);
    expect(t.deliveriesQueue.deliveryIds()).toEqual(ids);
  });

  describe('a taken idempotency key', () => {
    it('returns the event already published under it and fans out nothing again', async () => {
      t.tables.addWebhook({ events: ['job.started'] });
      t.tables.addWebhook({ events: ['job.started'] });
      const input = { kind: 'job.started' as const, data: { n: 1 }, idempotencyKey: 'k-1' };
      const first = await t.sut.publish(input);
      expect(first.deliveryIds).toHaveLength(2);

      const again = await t.sut.publish({ ...input, data: { n: 2 } });

      expect(again).toEqual({ eventId: first.eventId, deliveryIds: [...first.deliveryIds].sort() });
      expect(t.tables.events.size).toBe(1);
      expect(t.tables.deliveries.size).toBe(2);
      // The first data stands.
      expect(await t.sut.published('k-1')).toEqual({ kind: 'job.started', data: { n: 1 } });
      // Queued again (a delivery still queued is claimed by one of its jobs only), in case
      // the first publisher died between its commit and its queueing.
      expect(t.deliveriesQueue.deliveryIds().sort()).toEqual(
        [...first.deliveryIds, ...first.deliveryIds].sort(),
      );
    });

    it('holds even when a webhook subscribes after the first publish', async () => {
      const input = { kind: 'job.completed' as const, data: {}, idempotencyKey: 'k-2' };
      const first = await t.sut.publish(input);
      expect(first.deliveryIds).toEqual([]);
      t.tables.addWebhook({ events: ['job.completed'] });

      expect(await t.sut.publish(input)).toEqual(first);
      expect(t.tables.deliveries.size).toBe(0);
    });

    it('publishes once per key, and again for a different key', async () => {
      t.tables.addWebhook({ events: ['job.started'] });
      const a = await t.sut.publish({ kind: 'job.started', data: {}, idempotencyKey: 'a' });
      const b = await t.sut.publish({ kind: 'job.started', data: {}, idempotencyKey: 'b' });
      expect(b.eventId).not.toBe(a.eventId);
      expect(t.tables.deliveries.size).toBe(2);
    });
  });

  it('says nothing was published under a key never used', async () => {
    expect(await t.sut.published('never')).toBeNull();
  });

  it('sends the test event only to an active webhook', async () => {
    const active = t.tables.addWebhook({ events: [] });
    const inactive = t.tables.addWebhook({ active: false });

    const delivery = await t.sut.publishTest(active);
    expect(delivery).toMatchObject({ webhookId: active.id, event: 'webhook.test' });
    expect(t.deliveriesQueue.deliveryIds()).toEqual([delivery!.id]);

    expect(await t.sut.publishTest(inactive)).toBeNull();
    expect(t.tables.deliveries.size).toBe(1);
  });

  it('still returns the stored deliveries when Redis does not take the jobs', async () => {
    t.tables.addWebhook({ events: ['job.started'] });
    jest.spyOn(t.deliveriesQueue, 'addBulk').mockRejectedValue(new Error('Redis is down'));

    const result = await t.sut.publish({ kind: 'job.started', data: {} });

    // The sweeper queues them later; the record is what counts.
    expect(result.deliveryIds).toHaveLength(1);
    expect(t.tables.delivery(result.deliveryIds[0]).status).toBe('pending');
  });

  describe('with a deliveries worker in the same process (APP_ROLE=all)', () => {
    it('hands it the deliveries, with no job', async () => {
      const webhook = t.tables.addWebhook({ events: ['job.started'] });
      const taken: string[] = [];
      t.local.attach({
        take: (routes) => (taken.push(...routes.map((r) => r.id)), []),
        preLeaseMs: () => null,
      });

      const result = await t.sut.publish({ kind: 'job.started', data: {} });

      expect(taken).toEqual(result.deliveryIds);
      expect(t.tables.delivery(taken[0]).webhookId).toBe(webhook.id);
      expect(t.deliveriesQueue.added).toEqual([]);
    });

    it('queues what the worker does not take (a full lane, shutting down)', async () => {
      t.local.attach({ take: (routes) => routes.slice(1), preLeaseMs: () => null });
      await t.sut.queueDeliveries(
        ['delivery-1', 'delivery-2', 'delivery-3'].map((id) => ({ id, webhookId: 'webhook-1' })),
      );

      expect(t.deliveriesQueue.deliveryIds()).toEqual(['delivery-2', 'delivery-3']);
    });
  });
});
