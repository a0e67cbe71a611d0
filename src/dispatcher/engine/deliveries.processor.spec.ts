import type { Job } from 'bull';
import { TestContext, newTestService } from '../../../test/fakes/new-test-service';
import { waitFor } from '../../../test/support/wait-for';
import { WebhookEntity } from '../../webhooks/webhook.entity';
import { DeliveriesProcessor } from './deliveries.processor';
import { DeliverJobData, deliverJobs } from '../publish/delivery-job';
import type { LeasedDelivery } from '../../delivery-record/delivery.store';

const jobOf = (data: unknown) => ({ data }) as Job<DeliverJobData>;

describe('DeliveriesProcessor', () => {
  let t: TestContext<DeliveriesProcessor>;
  let webhook: WebhookEntity;

  beforeEach(async () => {
    t = await newTestService(DeliveriesProcessor, { DELIVERY_MAX_RETRIES: '1' });
    webhook = t.tables.addWebhook();
  });
  afterEach(() => t.sut.beforeApplicationShutdown());

  const sentIds = () => t.sender.requests.map((r) => r.deliveryId);

  it('sends the deliveries of a job, which carries their webhooks', async () => {
    const deliveries = [t.tables.addDelivery(webhook.id), t.tables.addDelivery(webhook.id)];
    t.sender.answer(200, 200);
    const [job] = deliverJobs(deliveries.map((d) => ({ id: d.id, webhookId: d.webhookId })));

    await t.sut.handle(jobOf(job.data));

    await waitFor(() => t.tables.delivery(deliveries[1].id).status === 'succeeded', {
      what: 'the delivery sent',
    });
    expect(sentIds().sort()).toEqual(deliveries.map((d) => d.id).sort());
  });

  it('sends a delivery once when two jobs carry it', async () => {
    const delivery = t.tables.addDelivery(webhook.id);
    t.sender.answer(200);
    const [job] = deliverJobs([{ id: delivery.id, webhookId: webhook.id }]);

    await Promise.all([t.sut.handle(jobOf(job.data)), t.sut.handle(jobOf(job.data))]);

    await waitFor(() => t.tables.delivery(delivery.id).status === 'succeeded', {
      what: 'the delivery sent',
    });
    expect(sentIds()).toEqual([delivery.id]);
  });

  it('queues a failed attempt with retries left as a delayed job that names the webhook', async () => {
    const delivery = t.tables.addDelivery(webhook.id);
    t.sender.answer(500);

    await t.sut.handle(jobOf({ deliveryIds: [delivery.id], webhookIds: [webhook.id] }));

    await waitFor(() => t.deliveriesQueue.added.length === 1, { what: 'the retry queued' });
    expect(t.deliveriesQueue.added[0]).toMatchObject({
      data: { deliveryIds: [delivery.id], webhookIds: [webhook.id] },
      opts: { delay: expect.any(Number) },
    });
    expect(t.tables.delivery(delivery.id)).toMatchObject({ status: 'pending', attemptCount: 1 });
  });

  it('refuses jobs once shutting down, so Bull keeps them for another worker', async () => {
    await t.sut.beforeApplicationShutdown();
    const delivery = t.tables.addDelivery(webhook.id);

    await expect(t.sut.handle(jobOf({ deliveryIds: [delivery.id] }))).rejects.toThrow(
      /shutting down/,
    );
    expect(sentIds()).toEqual([]);
  });

  describe('as the worker of the process that publishes (LocalDeliveries)', () => {
    beforeEach(() => t.sut.onModuleInit());

    it('sends what the process publishes, with no job', async () => {
      t.tables.addWebhook({ events: ['job.started'] });
      t.sender.answer(200);

      const { deliveryIds } = await t.dispatcher.publish({ kind: 'job.started', data: {} });

      await waitFor(() => t.tables.delivery(deliveryIds[0]).status === 'succeeded', {
        what: 'the delivery sent',
      });
      expect(sentIds()).toEqual(deliveryIds);
      expect(t.deliveriesQueue.added).toEqual([]);
    });

    /** A delivery leased to this worker as it was stored, as the ingest statement returns it. */
    const storedLeased = (): LeasedDelivery => {
      const delivery = t.tables.addDelivery(webhook.id, {
        leaseUntil: new Date(Date.now() + 30_000),
      });
      return {
        lease: delivery.leaseUntil!.toISOString(),
        target: {
          id: delivery.id,
          createdAt: delivery.createdAt.toISOString(),
          event: delivery.event,
          body: delivery.body!,
          status: 'pending',
          attemptCount: 0,
          seriesStart: 0,
          webhookId: webhook.id,
          ownerClientId: webhook.ownerClientId,
          destination: webhook.destination,
          url: webhook.url,
          secretEncrypted: webhook.secretEncrypted,
          headersEncrypted: null,
          previousSecretEncrypted: null,
          previousSecretExpiresAt: null,
          active: true,
          consecutiveFailures: 0,
        },
      };
    };
    const mappingRuleOf = ({ target }: LeasedDelivery) => ({
      id: target.id,
      webhookId: webhook.id,
    });

    it('sends what was leased to it as it was stored without claiming it', async () => {
      const leased = storedLeased();
      const claim = jest.spyOn(t.deliveryStore, 'claim');
      t.sender.answer(200);

      expect(t.sut.take([mappingRuleOf(leased)], [leased])).toEqual([]);

      await waitFor(() => t.tables.delivery(leased.target.id).status === 'succeeded', {
        what: 'the delivery sent',
      });
      expect(claim).not.toHaveBeenCalled();
      expect(sentIds()).toEqual([leased.target.id]);
      expect(t.tables.delivery(leased.target.id).leaseUntil).toBeNull();
    });

    it('renews, by its lease, one that waited too long to be sent on it', async () => {
      const leased = storedLeased();
      const claim = jest.spyOn(t.deliveryStore, 'claim');
      t.sender.answer(200);
      // Taken a minute ago: its lease (as far as this worker counts) has no attempt left in it.
      jest.spyOn(Date, 'now').mockReturnValueOnce(Date.now() - 60_000);

      t.sut.take([mappingRuleOf(leased)], [leased]);

      await waitFor(() => t.tables.delivery(leased.target.id).status === 'succeeded', {
        what: 'the delivery sent',
      });
      // Still leased in the store, so only its own lease lets the claim take it.
      expect(claim).toHaveBeenCalledWith([leased.target.id], expect.any(Number), [leased.lease]);
      expect(sentIds()).toEqual([leased.target.id]);
    });

    it('leases as deliveries are stored only while it runs: twice an attempt lease', async () => {
      const timeoutMs = t.config.delivery.timeoutMs;
      expect(t.sut.preLeaseMs()).toBe(2 * (timeoutMs + 5000));
      await t.sut.beforeApplicationShutdown();
      expect(t.sut.preLeaseMs()).toBeNull();
    });

    it('once shutting down, gives up the leases of what it is handed and queues it', async () => {
      await t.sut.beforeApplicationShutdown();
      const leased = storedLeased();

      expect(t.sut.take([mappingRuleOf(leased)], [leased])).toEqual([]);

      await waitFor(() => t.deliveriesQueue.deliveryIds().length === 1, { what: 'the job' });
      expect(t.deliveriesQueue.deliveryIds()).toEqual([leased.target.id]);
      expect(t.tables.delivery(leased.target.id).leaseUntil).toBeNull();
      expect(sentIds()).toEqual([]);
    });

    it('takes nothing once shutting down: publishes are queued for another worker', async () => {
      await t.sut.beforeApplicationShutdown();
      t.tables.addWebhook({ events: ['job.started'] });

      const { deliveryIds } = await t.dispatcher.publish({ kind: 'job.started', data: {} });

      const routes = [{ id: deliveryIds[0], webhookId: webhook.id }];
      expect(t.sut.take(routes, [])).toEqual(routes);
      expect(t.deliveriesQueue.deliveryIds()).toEqual(deliveryIds);
      expect(sentIds()).toEqual([]);
    });
  });
});
