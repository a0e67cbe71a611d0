import { randomBytes } from 'node:crypto';
import { ReplayWindow } from '../../src/delivery-record/delivery-control.store';
import { PlatformEventKind } from '../../src/webhooks/subscription-events';
import {
  StoreBackend,
  addWebhook,
  describeContract,
  endDelivery,
  newEvent,
  oneDelivery,
} from '../support/store-backends';

const MINUTE = 60_000;
/** From a minute ago on: every delivery a case makes. */
const lastMinute = (status: ReplayWindow['status']): ReplayWindow => ({
  since: new Date(Date.now() - MINUTE),
  until: null,
  status,
});
/** A platform event kind of one case alone: no other case's events are missed by its webhook. */
const ownKind = (): PlatformEventKind => `zoom.contract_${randomBytes(4).toString('hex')}.ended`;

/** A webhook that was inactive while `count` events of `kind` were published: it missed them. */
async function missedEvents(b: StoreBackend, kind: PlatformEventKind, count: number) {
  const webhook = await addWebhook(b, { events: [kind], active: false });
  // The events' own clock: the window starts as they are made.
  const since = new Date();
  const events = Array.from({ length: count }, () => newEvent(kind));
  for (const event of events) expect(await b.stores.events.fanOut(event)).toEqual([]);
  await b.stores.webhooks.update('alpha', webhook.id, { active: true });
  // createdAt as the caller gives it (the webhook's): the events count as published after it.
  const target = { id: webhook.id, events: webhook.events, createdAt: since };
  return { webhook, target, since };
}

describeContract('DeliveryControlStore', (backend) => {
  it('redelivers a final delivery as a fresh series: the attempt count goes on', async () => {
    const b = backend();
    const route = await oneDelivery(b);
    await endDelivery(b, route.id, 'failed');
    const redelivered = await b.stores.control.redeliver(route.webhookId, route.id);
    expect(redelivered).toMatchObject({
      id: route.id,
      webhookId: route.webhookId,
      status: 'pending',
      attemptCount: 1,
      seriesStart: 1,
      completedAt: null,
      requeuedBy: 'redeliver',
      requeuedAt: expect.any(Date),
    });
    // It is due again: a worker may lease it.
    expect(await b.stores.deliveries.claim([route.id], MINUTE)).toHaveLength(1);
  });

  it('leaves a pending delivery as it is, and knows no delivery of another webhook', async () => {
    const b = backend();
    const route = await oneDelivery(b);
    expect(await b.stores.control.redeliver(route.webhookId, route.id)).toBe('pending');
    const other = await addWebhook(b);
    expect(await b.stores.control.redeliver(other.id, route.id)).toBeNull();
    expect(await b.delivery(route.id)).toMatchObject({ status: 'pending', attemptCount: 0 });
  });

  it("replays the webhook's deliveries of one status in the window, and no other", async () => {
    const b = backend();
    const kind = ownKind();
    const webhook = await addWebhook(b, { events: [kind] });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const [route] = (await b.stores.events.fanOut(newEvent(kind)))!;
      ids.push(route.id);
    }
    const [failedId, succeededId, pendingId] = ids;
    await endDelivery(b, failedId, 'failed');
    await endDelivery(b, succeededId, 'succeeded');

    // A window that starts later, or ended before, holds none of them.
    const later = { ...lastMinute('failed'), since: new Date(Date.now() + MINUTE) };
    expect(await b.stores.control.replay(webhook.id, later)).toEqual([]);
    const before = { ...lastMinute('failed'), until: new Date(Date.now() - MINUTE / 2) };
    expect(await b.stores.control.replay(webhook.id, before)).toEqual([]);
    expect(await b.stores.control.replay((await addWebhook(b)).id, lastMinute('failed'))).toEqual(
      [],
    );

    expect(await b.stores.control.replay(webhook.id, lastMinute('failed'))).toEqual([failedId]);
    expect(await b.delivery(failedId)).toMatchObject({ status: 'pending', attemptCount: 1 });
    expect(await b.delivery(succeededId)).toMatchObject({ status: 'succeeded' });
    const until = { ...lastMinute('succeeded'), until: new Date(Date.now() + MINUTE) };
    expect(await b.stores.control.replay(webhook.id, until)).toEqual([succeededId]);
    expect(await b.delivery(pendingId)).toMatchObject({ status: 'pending', attemptCount: 0 });
  });

  it('creates a delivery for each event the webhook missed, once', async () => {
    const b = backend();
    const kind = ownKind();
    const { target, since } = await missedEvents(b, kind, 2);
    // Another kind, which it does not subscribe to, is not missed.
    await b.stores.events.fanOut(newEvent(ownKind()));
    const window: ReplayWindow = { since, until: null, status: 'failed' };
    const created = await b.stores.control.createMissed(target, window);
    expect(created).toHaveLength(2);
    for (const id of created) {
      expect(await b.delivery(id)).toEqual({ status: 'pending', attemptCount: 0, lastError: null });
    }
    const [leased] = await b.stores.deliveries.claim([created[0]], MINUTE);
    expect(leased).toMatchObject({ webhookId: target.id, event: kind });
    expect(JSON.parse(leased.body)).toMatchObject({ event: kind, data: { n: 1 } });
    expect(await b.stores.control.createMissed(target, window)).toEqual([]);
  });

  it('misses nothing outside the window, nor before the webhook was created', async () => {
    const b = backend();
    const { target, since } = await missedEvents(b, ownKind(), 1);
    const later = new Date(Date.now() + MINUTE);
    const window = (fields: Partial<ReplayWindow>): ReplayWindow => ({
      since,
      until: null,
      status: 'failed',
      ...fields,
    });
    expect(await b.stores.control.createMissed(target, window({ since: later }))).toEqual([]);
    expect(await b.stores.control.createMissed(target, window({ until: since }))).toEqual([]);
    expect(
      await b.stores.control.createMissed({ ...target, createdAt: later }, window({})),
    ).toEqual([]);
    expect(await b.stores.control.createMissed(target, window({ until: later }))).toHaveLength(1);
  });

  it("misses nothing for a webhook that receives nothing: inactive, or its owner's client gone", async () => {
    const b = backend();
    const kind = ownKind();
    const { webhook, target, since } = await missedEvents(b, kind, 1);
    const window: ReplayWindow = { since, until: null, status: 'failed' };
    await b.stores.webhooks.update('alpha', webhook.id, { active: false });
    expect(await b.stores.control.createMissed(target, window)).toEqual([]);

    const orphan = await addWebhook(b, { owner: 'gone', events: [kind] });
    const orphanTarget = { id: orphan.id, events: orphan.events, createdAt: since };
    expect(await b.stores.control.createMissed(orphanTarget, window)).toEqual([]);
  });

  it("gives a missed delivery to an ordered webhook its event's ordering key", async () => {
    const b = backend();
    const kind = ownKind();
    const webhook = await addWebhook(b, { events: [kind], active: false });
    await b.stores.webhooks.update('alpha', webhook.id, { ordering: 'meeting' });
    const since = new Date();
    const orderKey = `meeting-${randomBytes(4).toString('hex')}==`;
    await b.stores.events.fanOut({
      ...newEvent(kind),
      source: {
        platform: 'zoom',
        event: kind.slice('zoom.'.length),
        event_ts: Date.now(),
        account_id: 'acct',
        tracking_id: null,
        via: 'webhook',
      },
      orderKey,
    });
    await b.stores.webhooks.update('alpha', webhook.id, { active: true });
    const [id] = await b.stores.control.createMissed(
      { id: webhook.id, events: webhook.events, createdAt: since },
      { since, until: null, status: 'failed' },
    );
    const [leased] = await b.stores.deliveries.claim([id], MINUTE);
    expect(leased).toMatchObject({ id, orderKey, late: false });
  });

  it("reads the webhook's test deliveries after a time, newest first, at most as many as asked", async () => {
    const b = backend();
    const webhook = await addWebhook(b);
    const other = await addWebhook(b);
    const since = new Date(Date.now() - MINUTE);
    const tests: Date[] = [];
    for (let i = 0; i < 3; i++) {
      const test = await b.stores.events.insertTest(webhook.id, newEvent('webhook.test'));
      tests.push(test!.createdAt);
    }
    await b.stores.events.insertTest(other.id, newEvent('webhook.test'));
    // A delivery of another kind is not a test.
    await b.stores.events.fanOut(newEvent('job.started'));

    const newestFirst = [...tests].sort((x, y) => y.getTime() - x.getTime());
    expect(await b.stores.control.recentTests(webhook.id, since, 10)).toEqual(newestFirst);
    expect(await b.stores.control.recentTests(webhook.id, since, 2)).toEqual(
      newestFirst.slice(0, 2),
    );
    const later = new Date(Date.now() + MINUTE);
    expect(await b.stores.control.recentTests(webhook.id, later, 10)).toEqual([]);
  });
});
