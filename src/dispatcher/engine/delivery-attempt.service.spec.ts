import { WebhookEntity } from '../../webhooks/webhook.entity';
import { TestContext, newTestService } from '../../../test/fakes/new-test-service';
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

  describe('a fresh series (redeliver, replay)', () => {
    it('gives a delivery re-queued after its last attempt a whole new retry budget, counting on', async () => {
      // Failed after attempts 1-3, then redelivered: series_start = 3.
      const delivery = t.tables.addDelivery(webhook.id, { attemptCount: 3, seriesStart: 3 });
      t.sender.answer(500, 500, 500);
      const outcomes = [];
      for (let i = 0; i < 3; i++) {
        const outcome = await run(delivery.id);
        outcomes.push(outcome !== 'not claimed' && outcome.next);
        // Due again at once, as the retry's delayed job would find it.
        t.tables.delivery(delivery.id).nextAttemptAt = new Date();
      }

      expect(outcomes).toEqual(['retry', 'retry', 'done']);
      expect(t.tables.delivery(delivery.id)).toMatchObject({ status: 'failed' });
      expect(t.sender.requests.map((r) => r.attempt)).toEqual([4, 5, 6]);
    });
  });

  describe('Retry-After', () => {
    it('waits the longer of the backoff and the Retry-After of a 429 or 503', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      t.sender.answerWith(429, '30');
      const outcome = await run(delivery.id);
      expect(outcome).toMatchObject({ next: 'retry', delayMs: 30_000 });
    });

    it('keeps the backoff when it is the longer, and ignores Retry-After on other statuses', async () => {
      const first = t.tables.addDelivery(webhook.id);
      t.sender.answerWith(503, '0');
      const short = await run(first.id);
      expect(
        short !== 'not claimed' && short.next === 'retry' && short.delayMs,
      ).toBeGreaterThanOrEqual(0.8 * BACKOFF_MS);
      expect(
        short !== 'not claimed' && short.next === 'retry' && short.delayMs,
      ).toBeLessThanOrEqual(1.2 * BACKOFF_MS);

      const second = t.tables.addDelivery(webhook.id);
      t.sender.answerWith(500, '3600');
      const other = await run(second.id);
      expect(
        other !== 'not claimed' && other.next === 'retry' && other.delayMs,
      ).toBeLessThanOrEqual(1.2 * BACKOFF_MS);
    });

    it('caps a Retry-After at one hour', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      t.sender.answerWith(503, String(7 * 24 * 3600));
      expect(await run(delivery.id)).toMatchObject({ delayMs: 3_600_000 });
    });
  });

  describe('receiver health', () => {
    const webhooksDisabled = async (reason: string) =>
      (await t.metrics.webhooksDisabled.get()).values.find((v) => v.labels.reason === reason)
        ?.value ?? 0;

    it('disables the webhook on 410 at once and ends its pending deliveries failed', async () => {
      const delivery = t.tables.addDelivery(webhook.id);
      const waiting = t.tables.addDelivery(webhook.id, { attemptCount: 1 });
      t.sender.answer(410);

      expect(await run(delivery.id)).toEqual({ next: 'done' });

      expect(t.tables.webhooks.get(webhook.id)).toMatchObject({
        active: false,
        disabledReason: 'gone',
        disabledAt: expect.any(Date),
      });
      expect(t.tables.delivery(delivery.id)).toMatchObject({ status: 'failed', attemptCount: 1 });
      expect(t.tables.delivery(waiting.id)).toMatchObject({
        status: 'failed',
        lastError: 'webhook disabled: the receiver answered 410 Gone',
      });
      expect(await webhooksDisabled('gone')).toBe(1);
    });

    describe('with WEBHOOK_DISABLE_AFTER_FAILURES=2', () => {
      beforeEach(async () => {
        t = await newTestService(DeliveryAttemptService, {
          DELIVERY_MAX_RETRIES: '0',
          WEBHOOK_DISABLE_AFTER_FAILURES: '2',
        });
        webhook = t.tables.addWebhook();
      });

      it('disables after that many deliveries in a row end failed', async () => {
        const pending = t.tables.addDelivery(webhook.id, { attemptCount: 0 });
        for (let i = 0; i < 2; i++) {
          t.sender.answer(500);
          await run(t.tables.addDelivery(webhook.id).id);
        }
        expect(t.tables.webhooks.get(webhook.id)).toMatchObject({
          active: false,
          disabledReason: 'failing',
        });
        expect(t.tables.delivery(pending.id)).toMatchObject({
          status: 'failed',
          lastError: 'webhook disabled: its last 2 deliveries failed',
        });
        expect(await webhooksDisabled('failing')).toBe(1);
      });

      it('starts the run afresh after a success, and leaves test deliveries out of it', async () => {
        for (const [status, event] of [
          [500, 'job.started'],
          [200, 'job.started'],
          [500, 'job.started'],
          [500, 'webhook.test'],
        ] as const) {
          t.sender.answer(status);
          await run(t.tables.addDelivery(webhook.id, { event }).id);
        }
        expect(t.tables.webhooks.get(webhook.id)).toMatchObject({
          active: true,
          consecutiveFailures: 1,
        });
      });
    });
  });

  describe('signing secrets (docs/receiving.md)', () => {
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
