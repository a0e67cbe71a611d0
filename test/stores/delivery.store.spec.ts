import { attemptResult, describeContract, oneDelivery } from '../support/store-backends';

describeContract('DeliveryStore', (backend) => {
  it('leases a pending, due delivery to one claim at a time, with its webhook', async () => {
    const b = backend();
    const route = await oneDelivery(b);
    const [target] = await b.stores.deliveries.claim([route.id], 60_000);
    expect(target).toMatchObject({
      id: route.id,
      webhookId: route.webhookId,
      // Whose part of a broker the attempt may publish to (docs/destinations.md).
      ownerClientId: 'alpha',
      event: 'job.started',
      status: 'pending',
      attemptCount: 0,
      active: true,
    });
    expect(JSON.parse(target.body)).toMatchObject({ event: 'job.started', data: { n: 1 } });
    expect(await b.stores.deliveries.claim([route.id], 60_000)).toEqual([]);
  });

  it('records an attempt only at the attempt count it started from', async () => {
    const b = backend();
    const route = await oneDelivery(b);
    const [target] = await b.stores.deliveries.claim([route.id], 60_000);
    const record = {
      deliveryId: route.id,
      createdAt: target.createdAt,
      attempt: 1,
      result: attemptResult(),
      status: 'pending' as const,
      nextAttemptAt: new Date(Date.now() + 60_000),
    };
    expect(await b.stores.deliveries.recordAttempt(record)).toBe(true);
    expect(await b.stores.deliveries.recordAttempt(record)).toBe(false);
    expect(await b.delivery(route.id)).toEqual({
      status: 'pending',
      attemptCount: 1,
      lastError: 'HTTP 500',
    });
    // Not due for a minute: nothing to claim.
    expect(await b.stores.deliveries.claim([route.id], 60_000)).toEqual([]);
  });

  it('cancels a pending delivery once: it ends failed, unsent', async () => {
    const b = backend();
    const route = await oneDelivery(b);
    // As a worker cancels it: the claim's target (id and created_at) of an inactive webhook.
    const [target] = await b.stores.deliveries.claim([route.id], 60_000);
    expect(await b.stores.deliveries.cancel(target, 'webhook is inactive')).toBe(true);
    expect(await b.stores.deliveries.cancel(target, 'again')).toBe(false);
    expect(await b.delivery(route.id)).toEqual({
      status: 'failed',
      attemptCount: 0,
      lastError: 'webhook is inactive',
    });
  });
});
