import {
  addWebhook,
  describeContract,
  newEvent,
  quietEarlierWebhooks,
} from '../support/store-backends';

const sorted = (ids: string[]) => [...ids].sort();

describeContract('EventStore', (backend) => {
  beforeEach(() => quietEarlierWebhooks(backend()));

  it('fans an event out to the active webhooks subscribed to its kind, and only those', async () => {
    const b = backend();
    const a = await addWebhook(b, { events: ['job.completed'] });
    const other = await addWebhook(b, {
      owner: 'beta',
      events: ['follower.lost', 'job.completed'],
    });
    await addWebhook(b, { events: ['job.started'] });
    await addWebhook(b, { events: ['job.completed'], active: false });
    const routes = await b.stores.events.fanOut(newEvent('job.completed'));
    expect(sorted(routes!.map((r) => r.webhookId))).toEqual(sorted([a.id, other.id]));
  });

  it('gives a webhook of an API client no longer configured nothing (docs/api.md#receiver-health)', async () => {
    const b = backend();
    const kept = await addWebhook(b, { events: ['job.started'] });
    await addWebhook(b, { owner: 'gone', events: ['job.started'] });
    const routes = await b.stores.events.fanOut(newEvent('job.started'));
    expect(routes!.map((r) => r.webhookId)).toEqual([kept.id]);
  });

  it('sends a platform event to zoom.* and zoom.<event> subscribers, once each', async () => {
    const b = backend();
    const all = await addWebhook(b, { events: ['zoom.*'] });
    const both = await addWebhook(b, { events: ['zoom.meeting.started', 'zoom.*'] });
    await addWebhook(b, { events: ['zoom.meeting.ended'] });
    const routes = await b.stores.events.fanOut(newEvent('zoom.meeting.started'));
    expect(sorted(routes!.map((r) => r.webhookId))).toEqual(sorted([all.id, both.id]));
  });

  it('writes nothing for a taken idempotency key, and finds the first under it', async () => {
    const b = backend();
    const webhook = await addWebhook(b, { events: ['follower.gained'] });
    const key = `contract:${Math.random()}`;
    const first = newEvent('follower.gained', key);
    const routes = await b.stores.events.fanOut(first);
    expect(await b.stores.events.fanOut(newEvent('follower.gained', key))).toBeNull();
    expect(await b.stores.events.findByIdempotencyKey(key)).toEqual({
      eventId: first.id,
      kind: 'follower.gained',
      data: first.data,
      deliveries: routes,
    });
    expect(routes).toEqual([{ id: expect.any(String), webhookId: webhook.id }]);
    expect(await b.stores.events.findByIdempotencyKey(`${key}:none`)).toBeNull();
  });

  it('stores a test event for an active webhook only', async () => {
    const b = backend();
    const active = await addWebhook(b);
    const inactive = await addWebhook(b, { active: false });
    const delivery = await b.stores.events.insertTest(active.id, newEvent('webhook.test'));
    expect(delivery).toMatchObject({
      webhookId: active.id,
      event: 'webhook.test',
      status: 'pending',
    });
    expect(await b.stores.events.insertTest(inactive.id, newEvent('webhook.test'))).toBeNull();
  });
});
