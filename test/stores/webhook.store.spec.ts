import { addWebhook, describeContract } from '../support/store-backends';

describeContract('WebhookStore', (backend) => {
  it('finds, changes and removes a webhook for its owner only', async () => {
    const { stores } = backend();
    const webhook = await addWebhook(backend(), { owner: 'alpha' });
    expect(await stores.webhooks.findOwned('beta', webhook.id)).toBeNull();
    expect(await stores.webhooks.update('beta', webhook.id, { active: false })).toBe(false);
    expect(await stores.webhooks.remove('beta', webhook.id)).toBe(false);
    expect(await stores.webhooks.findOwned('alpha', webhook.id)).toMatchObject({
      id: webhook.id,
      active: true,
    });
    expect(await stores.webhooks.update('alpha', webhook.id, { events: ['job.completed'] })).toBe(
      true,
    );
    expect(await stores.webhooks.remove('alpha', webhook.id)).toBe(true);
    expect(await stores.webhooks.findOwned('alpha', webhook.id)).toBeNull();
  });

  it('stores nothing past the owner’s limit', async () => {
    const { stores } = backend();
    const owner = 'reader';
    const make = () =>
      stores.webhooks.create(
        {
          ownerClientId: owner,
          url: 'https://receiver.example.com/limited',
          events: ['job.started'],
          secretEncrypted: 'sealed',
          secretHint: 'aled',
          active: true,
          maxInFlight: 10,
          rateLimit: null,
          ordering: 'none',
        },
        2,
      );
    expect(await make()).not.toBeNull();
    expect(await make()).not.toBeNull();
    expect(await make()).toBeNull();
    expect(await stores.webhooks.page(owner, null, 10)).toHaveLength(2);
  });

  it('pages newest first, limit + 1 rows, and continues after a cursor', async () => {
    const b = backend();
    const owner = 'operator';
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await addWebhook(b, { owner }));
    const newestFirst = made.map((w) => w.id).reverse();
    const first = await b.stores.webhooks.page(owner, null, 2);
    expect(first.map((w) => w.id)).toEqual(newestFirst);
    const last = first[1];
    const rest = await b.stores.webhooks.page(
      owner,
      { createdAt: last.createdAt.toISOString(), id: last.id },
      2,
    );
    expect(rest.map((w) => w.id)).toEqual(newestFirst.slice(2));
  });

  it('keeps the replaced secret as the previous one, until the given time', async () => {
    const b = backend();
    const webhook = await addWebhook(b, { owner: 'beta' });
    // Read now: the fake hands out its rows themselves, which the update then changes.
    const replaced = webhook.secretEncrypted;
    const until = new Date(Date.now() + 3_600_000);
    const changed = await b.stores.webhooks.update('beta', webhook.id, {
      secret: { secretEncrypted: 'sealed-new', secretHint: '-new', previousUntil: until },
    });
    expect(changed).toBe(true);
    expect(await b.stores.webhooks.findOwned('beta', webhook.id)).toMatchObject({
      secretEncrypted: 'sealed-new',
      secretHint: '-new',
      previousSecretEncrypted: replaced,
      previousSecretExpiresAt: until,
    });
  });
});
