import { addWebhook, describeContract, newEvent } from '../support/store-backends';

describeContract('ReceiverHealthStore', (backend) => {
  it('counts a run of failures, and starts afresh after a success', async () => {
    const b = backend();
    const webhook = await addWebhook(b);
    expect(await b.stores.health.countFailure(webhook.id)).toBe(1);
    expect(await b.stores.health.countFailure(webhook.id)).toBe(2);
    await b.stores.health.resetFailures(webhook.id);
    expect(await b.stores.health.countFailure(webhook.id)).toBe(1);
  });

  it('disables an active webhook and fails its pending deliveries; an inactive one: null', async () => {
    const b = backend();
    const webhook = await addWebhook(b, { events: ['job.completed'] });
    const routes = await b.stores.events.fanOut(newEvent('job.completed'));
    const mine = routes!.filter((r) => r.webhookId === webhook.id);
    expect(mine).toHaveLength(1);
    expect(await b.stores.health.disable(webhook.id, 'failing', 'receiver failing')).toBe(1);
    expect(await b.delivery(mine[0].id)).toMatchObject({
      status: 'failed',
      lastError: 'receiver failing',
    });
    expect(await b.stores.webhooks.findOwned('alpha', webhook.id)).toMatchObject({
      active: false,
      disabledReason: 'failing',
    });
    expect(await b.stores.health.disable(webhook.id, 'failing', 'again')).toBeNull();
  });
});
