import { ApiError } from '../../common/api-error';
import { TestContext, newTestService } from '../../../test/fakes/new-test-service';
import { WebhookEntity } from '../../webhooks/webhook.entity';
import { DeliveryControlService } from './delivery-control.service';

const DAY_MS = 24 * 3600 * 1000;
const ago = (ms: number) => new Date(Date.now() - ms);

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('DeliveryControlService', () => {
  let t: TestContext<DeliveryControlService>;
  let webhook: WebhookEntity;

  beforeEach(async () => {
    t = await newTestService(DeliveryControlService, { RETENTION_DAYS: '7' });
    webhook = t.tables.addWebhook({ ownerClientId: 'client-a', createdAt: ago(DAY_MS) });
  });

  describe('redeliver', () => {
    it('starts a fresh series for a final delivery and queues a job for it', async () => {
      const delivery = t.tables.addDelivery(webhook.id, { status: 'failed', attemptCount: 4 });
      const res = await t.sut.redeliver('client-a', webhook.id, delivery.id);
      expect(res).toMatchObject({ id: delivery.id, status: 'pending', requeued_by: 'redeliver' });
      expect(t.tables.delivery(delivery.id)).toMatchObject({ seriesStart: 4, attemptCount: 4 });
      expect(t.deliveriesQueue.deliveryIds()).toEqual([delivery.id]);
    });

    it('refuses a pending delivery (409), an unknown one and another client (404)', async () => {
      const pending = t.tables.addDelivery(webhook.id);
      expect(
        (await rejection(t.sut.redeliver('client-a', webhook.id, pending.id))).getStatus(),
      ).toBe(409);
      expect(
        (await rejection(t.sut.redeliver('client-b', webhook.id, pending.id))).getStatus(),
      ).toBe(404);
      const other = t.tables.addWebhook();
      const theirs = t.tables.addDelivery(other.id, { status: 'failed' });
      expect(
        (await rejection(t.sut.redeliver('client-a', webhook.id, theirs.id))).getStatus(),
      ).toBe(404);
      expect(t.deliveriesQueue.added).toEqual([]);
    });
  });

  describe('replay', () => {
    it('re-queues the window with the status asked, and counts missed events once', async () => {
      const inside = t.tables.addDelivery(webhook.id, {
        status: 'failed',
        createdAt: ago(3600_000),
      });
      t.tables.addDelivery(webhook.id, { status: 'succeeded', createdAt: ago(3600_000) });
      t.tables.addDelivery(webhook.id, { status: 'failed', createdAt: ago(3 * DAY_MS) });
      await t.dispatcher.publish({ kind: 'job.started', data: {} });
      webhook.active = false;
      await t.dispatcher.publish({ kind: 'job.started', data: { missed: true } });
      await t.dispatcher.publish({ kind: 'job.completed', data: { other: 'kind' } });
      webhook.active = true;

      const since = ago(2 * DAY_MS).toISOString();
      expect(await t.sut.replay('client-a', webhook.id, { since })).toEqual({ count: 1 });
      expect(t.tables.delivery(inside.id)).toMatchObject({
        status: 'pending',
        requeuedBy: 'replay',
      });
      expect(
        await t.sut.replay('client-a', webhook.id, { since, missed: true, status: 'succeeded' }),
      ).toEqual({
        count: 2,
      });
      // The succeeded delivery and the one missed event (the other kind is not subscribed, the
      // first event was received); now that it has its delivery, a second replay creates none.
      expect(await t.sut.replay('client-a', webhook.id, { since, missed: true })).toEqual({
        count: 0,
      });
    });

    it('counts platform events a zoom.* webhook missed, as the fan-out matches them', async () => {
      const platform = t.tables.addWebhook({
        ownerClientId: 'client-a',
        events: ['zoom.*'],
        active: false,
        createdAt: ago(DAY_MS),
      });
      await t.dispatcher.publish({ kind: 'zoom.meeting.created', data: {} });
      platform.active = true;
      const since = ago(DAY_MS).toISOString();
      expect(await t.sut.replay('client-a', platform.id, { since, missed: true })).toEqual({
        count: 1,
      });
    });

    it('refuses a since older than RETENTION_DAYS, an until not after since, and an inactive webhook', async () => {
      const old = await rejection(
        t.sut.replay('client-a', webhook.id, { since: ago(8 * DAY_MS).toISOString() }),
      );
      expect(old.getStatus()).toBe(400);
      expect(old.extra.details).toEqual([
        expect.objectContaining({ field: 'since', message: expect.stringContaining('7 days') }),
      ]);
      const since = ago(DAY_MS).toISOString();
      const backwards = await rejection(
        t.sut.replay('client-a', webhook.id, { since, until: ago(2 * DAY_MS).toISOString() }),
      );
      expect(backwards.extra.details).toEqual([expect.objectContaining({ field: 'until' })]);
      webhook.active = false;
      expect((await rejection(t.sut.replay('client-a', webhook.id, { since }))).getStatus()).toBe(
        409,
      );
    });
  });
});
