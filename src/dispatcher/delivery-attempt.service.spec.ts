import { WebhookEntity } from '../webhooks/webhook.entity';
import { TestContext, newTestService } from '../../test/fakes/new-test-service';
import { DeliveryAttemptService, INACTIVE_WEBHOOK_ERROR } from './delivery-attempt.service';

const BACKOFF_MS = 1000;

describe('DeliveryAttemptService', () => {
  let t: TestContext<DeliveryAttemptService>;
  let webhook: WebhookEntity;

  beforeEach(async () => {
    // Three attempts in all: the first try and two retries.
    t = await newTestService(DeliveryAttemptService, {
      DELIVERY_MAX_RETRIES: '2',
      DELIVERY_BACKOFF_MS: String(BACKOFF_MS),
    });
    webhook = t.tables.addWebhook();
  });

  /** What the processor does for a job's delivery: claim it, then attempt it if claimed. */
  const run = async (deliveryId: string) => {
    const [target] = await t.deliveryStore.claim([deliveryId], 60000);
    return target ? t.sut.attempt(target) : 'not claimed';
  };

  const failedDeliveries = async () =>
    (await t.metrics.deliveries.get()).values.find((v) => v.labels.outcome === 'failed')?.value ??
    0;

  describe('the final attempt', () => {
    it('keeps a failed attempt before the last one pending, due again after the backoff', async () => {
      const delivery = t.tables.addDelivery(webhook.id, { attemptCount: 1 });
      t.sender.answer(500);
      const before = Date.now();

      const outcome = await run(delivery.id);

      // Attempt 2 of 3; the second attempt waits 2 × base, ±20%.
      expect(outcome).toMatchObject({ next: 'retry' });
      const delayMs = outcome !== 'not claimed' && outcome.next === 'retry' ? outcome.delayMs : NaN;
      expect(delayMs).toBeGreaterThanOrEqual(0.8 * 2 * BACKOFF_MS);
      expect(delayMs).toBeLessThanOrEqual(1.2 * 2 * BACKOFF_MS);
      const stored = t.tables.delivery(delivery.id);
      expect(stored).toMatchObject({
        status: 'pending',
        attemptCount: 2,
        lastStatusCode: 500,
        completedAt: null,
      });
      expect(stored.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before + delayMs);
      expect(await failedDeliveries()).toBe(0);
    });

    it('ends the delivery failed when the last attempt fails, with no next attempt', async () => {
      const delivery = t.tables.addDelivery(webhook.id, { attemptCount: 2 });
      t.sender.answer(null);

      const outcome = await run(delivery.id);

      expect(outcome).toEqual({ next: 'done' });
      expect(t.sender.requests.map((r) => r.attempt)).toEqual([3]);
      expect(t.tables.delivery(delivery.id)).toMatchObject({
        status: 'failed',
        attemptCount: 3,
        nextAttemptAt: null,
        lastError: 'ECONNREFUSED',
      });
      expect(t.tables.delivery(delivery.id).completedAt).toBeInstanceOf(Date);
      expect(await failedDeliveries()).toBe(1);
    });

    it('ends the delivery succeeded on a 2xx, whichever attempt it is', async () => {
      const delivery = t.tables.addDelivery(webhook.id, { attemptCount: 2 });
      t.sender.answer(204);

      expect(await run(delivery.id)).toEqual({ next: 'done' });
      expect(t.tables.delivery(delivery.id)).toMatchObject({
        status: 'succeeded',
        attemptCount: 3,
        nextAttemptAt: null,
      });
    });

    it('counts attempts from the record, so a re-queued job goes on where the record stands', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      t.sender.answer(503, 503, 503);
      const outcomes = [];
      for (let i = 0; i < 3; i++) {
        // The retry is due now: as if its delayed job had fired.
        t.tables.delivery(delivery.id).nextAttemptAt = new Date();
        const outcome = await run(delivery.id);
        outcomes.push(outcome === 'not claimed' ? outcome : outcome.next);
      }

      expect(outcomes).toEqual(['retry', 'retry', 'done']);
      expect(t.sender.requests.map((r) => r.attempt)).toEqual([1, 2, 3]);
      expect(t.tables.delivery(delivery.id).status).toBe('failed');
      // A fourth run finds the delivery final: nothing is claimed, nothing sent.
      expect(await run(delivery.id)).toBe('not claimed');
      expect(t.sender.requests).toHaveLength(3);
    });
  });

  describe('an inactive or deleted webhook', () => {
    it('sends nothing to an inactive webhook and ends the delivery failed', async () => {
      webhook.active = false;
      const delivery = t.tables.addDelivery(webhook.id, { attemptCount: 1 });

      expect(await run(delivery.id)).toEqual({ next: 'done' });

      expect(t.sender.requests).toEqual([]);
      expect(t.tables.attempts).toEqual([]);
      expect(t.tables.delivery(delivery.id)).toMatchObject({
        status: 'failed',
        attemptCount: 1,
        nextAttemptAt: null,
        lastError: INACTIVE_WEBHOOK_ERROR,
      });
      expect(await failedDeliveries()).toBe(1);
    });

    it('sends nothing for a delivery deleted with its webhook', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      t.tables.deleteWebhook(webhook.id);

      expect(await run(delivery.id)).toBe('not claimed');
      expect(t.sender.requests).toEqual([]);
      expect(t.tables.attempts).toEqual([]);
    });

    it('records nothing when the webhook is deleted while the attempt is in flight', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      t.sender.answer(500);
      const send = t.sender.send.bind(t.sender);
      jest.spyOn(t.sender, 'send').mockImplementation(async (req) => {
        t.tables.deleteWebhook(webhook.id);
        return send(req);
      });

      // No retry either: there is no delivery left to retry.
      expect(await run(delivery.id)).toEqual({ next: 'done' });
      expect(t.tables.attempts).toEqual([]);
    });

    it('sends nothing for a delivery already final', async () => {
      const delivery = t.tables.addDelivery(webhook.id, { status: 'succeeded', attemptCount: 1 });

      expect(await run(delivery.id)).toBe('not claimed');
      expect(t.sender.requests).toEqual([]);
    });
  });

  describe('signing secrets (SPEC §10)', () => {
    it('passes the replaced secret while it is in its grace, and not after', async () => {
      webhook.previousSecretEncrypted = 'sealed-previous';
      webhook.previousSecretExpiresAt = new Date(Date.now() + 60_000);
      t.sender.answer(200, 200);

      await run(t.tables.addDelivery(webhook.id).id);
      webhook.previousSecretExpiresAt = new Date(Date.now() - 1);
      await run(t.tables.addDelivery(webhook.id).id);

      expect(t.sender.requests.map((r) => [r.secretEncrypted, r.previousSecretEncrypted])).toEqual([
        ['sealed-secret', 'sealed-previous'],
        ['sealed-secret', null],
      ]);
    });
  });

  describe('the lease', () => {
    it('claims a delivery for one worker at a time, and frees it once the attempt is recorded', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      const [held] = await t.deliveryStore.claim([delivery.id], 60000);
      // Queued twice (the sweeper, a retried job): the second claim gets nothing.
      expect(await t.deliveryStore.claim([delivery.id], 60000)).toEqual([]);
      t.sender.answer(500);
      await t.sut.attempt(held);
      expect(t.tables.delivery(delivery.id).leaseUntil).toBeNull();
    });

    it('does not claim a retry before it is due, nor one whose lease has not lapsed', async () => {
      const later = t.tables.addDelivery(webhook.id, {
        nextAttemptAt: new Date(Date.now() + 60000),
      });
      const held = t.tables.addDelivery(webhook.id, { leaseUntil: new Date(Date.now() + 60000) });
      const lapsed = t.tables.addDelivery(webhook.id, { leaseUntil: new Date(Date.now() - 1) });
      const claimed = await t.deliveryStore.claim([later.id, held.id, lapsed.id], 60000);
      expect(claimed.map((c) => c.id)).toEqual([lapsed.id]);
    });

    it('tells the caller the request is over before the record is written', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      const [target] = await t.deliveryStore.claim([delivery.id], 60000);
      t.sender.answer(200);
      const order: string[] = [];
      const record = t.deliveryStore.recordAttempt.bind(t.deliveryStore);
      jest.spyOn(t.deliveryStore, 'recordAttempt').mockImplementation((r) => {
        order.push('record');
        return record(r);
      });
      await t.sut.attempt(target, () => order.push('sent'));
      expect(order).toEqual(['sent', 'record']);
    });
  });
});
