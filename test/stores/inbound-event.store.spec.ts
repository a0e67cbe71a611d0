import { randomUUID } from 'node:crypto';
import { IngestPlan, inboundEventKey, notificationSource } from '../../src/inbound/inbound-job';
import { SubscriptionEvent } from '../../src/webhooks/subscription-events';
import {
  addWebhook,
  describeContract,
  newEvent,
  newInboundEvent,
  quietEarlierWebhooks,
} from '../support/store-backends';

const inbound = newInboundEvent;

const publish = (kind: SubscriptionEvent): IngestPlan => ({
  then: 'publish',
  event: {
    id: randomUUID(),
    kind,
    createdAt: new Date(),
    data: { id: '1' },
    source: notificationSource({
      event: 'meeting.started',
      eventTs: 1735725605123,
      accountId: 'acct-1',
      trackingId: null,
      receivedAt: new Date(),
      via: 'webhook',
    }),
  },
});

describeContract('InboundEventStore', (backend) => {
  beforeEach(() => quietEarlierWebhooks(backend()));

  it('stores an identity once: a redelivery writes nothing', async () => {
    const { inbound: store } = backend().stores;
    const first = inbound('meeting.created');
    expect(await store.insert(first)).toEqual({
      id: first.id,
      processed: true,
      deliveries: [],
      leased: [],
    });
    const again = { ...inbound('meeting.created'), identityKey: first.identityKey };
    expect(await store.insert(again)).toBeNull();
    expect(await store.findById(again.id)).toBeNull();
    expect(await store.findById(first.id)).toMatchObject({
      event: 'meeting.created',
      identityKey: first.identityKey,
      downloadTokenEncrypted: null,
    });
  });

  it('leaves a queued event unprocessed, with its token, until it is marked processed', async () => {
    const { inbound: store } = backend().stores;
    const row = inbound('recording.completed', { then: 'queue' });
    expect(await store.insert(row)).toMatchObject({ processed: false, deliveries: [] });
    expect(await store.anyUnprocessed([row.identityKey])).toBe(true);
    expect(await store.findUnprocessed(new Date(Date.now() + 60_000), 1000)).toContain(row.id);
    await store.recordError(row.id, 'platform down');
    expect(await store.findById(row.id)).toMatchObject({
      processedAt: null,
      processError: 'platform down',
      downloadTokenEncrypted: 'sealed-token',
    });
    await store.markProcessed((await store.findById(row.id))!);
    expect(await store.anyUnprocessed([row.identityKey])).toBe(false);
    expect(await store.findUnprocessed(new Date(Date.now() + 60_000), 1000)).not.toContain(row.id);
    expect(await store.findById(row.id)).toMatchObject({ downloadTokenEncrypted: null });
  });

  it('publishes a mapped event with it, under the key the inbound job would use', async () => {
    const b = backend();
    const webhook = await addWebhook(b, { events: ['job.started'] });
    await addWebhook(b, { owner: 'gone', events: ['job.started'] });
    await addWebhook(b, { events: ['job.completed'] });
    const plan = publish('job.started');
    const row = inbound('meeting.started', plan);
    const stored = await b.stores.inbound.insert(row);
    expect(stored).toMatchObject({ processed: true, leased: [] });
    expect(stored!.deliveries).toEqual([{ id: expect.any(String), webhookId: webhook.id }]);
    const keyed = await b.stores.events.findByIdempotencyKey(
      inboundEventKey(row.id, 'job.started'),
    );
    expect(keyed).toMatchObject({ kind: 'job.started', deliveries: stored!.deliveries });
  });

  it('claims the key of an inline event left to the inbound job: publishing it again writes nothing', async () => {
    const b = backend();
    await addWebhook(b, { events: ['job.started', 'zoom.*'] });
    const row = inbound('meeting.started', publish('job.started'));
    const stored = await b.stores.inbound.insert(row);
    expect(stored).toMatchObject({ processed: false });
    expect(stored!.deliveries).toHaveLength(1);
    // What the inbound job does with it: publish the mapped event under the same key.
    const again = newEvent('job.started', inboundEventKey(row.id, 'job.started'));
    expect(await b.stores.events.fanOut(again)).toBeNull();
  });

  it('leaves an event a webhook takes as it is to the inbound job', async () => {
    const b = backend();
    await addWebhook(b, { events: ['zoom.*'] });
    const row = inbound('meeting.created');
    expect(await b.stores.inbound.insert(row)).toMatchObject({ processed: false });
    expect(await b.stores.inbound.anyUnprocessed([row.identityKey])).toBe(true);
  });
});
