import { randomUUID } from 'node:crypto';
import { DeploymentEvent } from '../../src/delivery-record/operational-events.store';
import { OperationalEvent } from '../../src/webhooks/subscription-events';
import {
  addWebhook,
  describeContract,
  endDelivery,
  oneDelivery,
  quietEarlierWebhooks,
} from '../support/store-backends';

const sorted = (ids: string[]) => [...ids].sort();

/** An operational event of `kind`, its body as the service serialises it. */
function operational(kind: OperationalEvent): DeploymentEvent {
  const id = randomUUID();
  const createdAt = new Date();
  const data = { n: 1 };
  const body = JSON.stringify({ id, event: kind, created_at: createdAt, data, source: null });
  return { id, kind, createdAt, data, body, traceContext: null };
}

describeContract('OperationalEventStore', (backend) => {
  beforeEach(() => quietEarlierWebhooks(backend()));

  it("reads a failed delivery's facts from its record, and nothing of one not failed", async () => {
    const b = backend();
    const failed = await oneDelivery(b);
    await endDelivery(b, failed.id, 'failed');
    expect(await b.stores.operational.failedDelivery(failed.id)).toEqual({
      eventId: expect.any(String),
      attemptCount: 1,
      lastStatusCode: 500,
      lastError: 'HTTP 500',
    });
    const pending = await oneDelivery(b);
    expect(await b.stores.operational.failedDelivery(pending.id)).toBeNull();
    expect(await b.stores.operational.failedDelivery(randomUUID())).toBeNull();
  });

  it('reads when a disabled webhook was disabled, and nothing of an active one', async () => {
    const b = backend();
    const webhook = await addWebhook(b);
    expect(await b.stores.operational.disabledWebhook(webhook.id)).toBeNull();
    await b.stores.health.disable(webhook.id, 'gone', 'HTTP 410');
    expect(await b.stores.operational.disabledWebhook(webhook.id)).toEqual({
      url: webhook.url,
      disabledAt: expect.any(Date),
    });
    expect(await b.stores.operational.disabledWebhook(randomUUID())).toBeNull();
  });

  it("fans an event about a webhook out to its owner's other active webhooks of that kind", async () => {
    const b = backend();
    const about = await addWebhook(b, { events: ['bridge.delivery.failed'] });
    const other = await addWebhook(b, { events: ['job.started', 'bridge.delivery.failed'] });
    await addWebhook(b, { events: ['bridge.webhook.disabled'] });
    await addWebhook(b, { events: ['bridge.delivery.failed'], active: false });
    await addWebhook(b, { owner: 'beta', events: ['bridge.delivery.failed'] });
    const event = { ...operational('bridge.delivery.failed'), aboutWebhookId: about.id };
    const routes = await b.stores.operational.fanOut(event);
    expect(routes).toEqual([{ id: expect.any(String), webhookId: other.id }]);
    expect(await b.delivery(routes[0].id)).toMatchObject({ status: 'pending', attemptCount: 0 });
  });

  it('stores nothing when no other webhook takes the event', async () => {
    const b = backend();
    const about = await addWebhook(b, { events: ['bridge.delivery.failed'] });
    const event = { ...operational('bridge.delivery.failed'), aboutWebhookId: about.id };
    expect(await b.stores.operational.fanOut(event)).toEqual([]);
    const unknown = { ...operational('bridge.delivery.failed'), aboutWebhookId: randomUUID() };
    expect(await b.stores.operational.fanOut(unknown)).toEqual([]);
  });

  it('fans a deployment event out to the webhooks of bridge:admin clients only', async () => {
    const b = backend();
    const admin = await addWebhook(b, {
      owner: 'admin',
      events: ['bridge.reconciliation.completed'],
    });
    await addWebhook(b, { events: ['bridge.reconciliation.completed'] });
    const routes = await b.stores.operational.fanOutToAdmins(
      operational('bridge.reconciliation.completed'),
    );
    expect(routes.map((r) => r.webhookId)).toEqual([admin.id]);
  });

  it("fans an account's event out to that client's webhooks, none for an unconfigured one", async () => {
    const b = backend();
    const kind = 'bridge.account.deauthorized';
    const first = await addWebhook(b, { owner: 'beta', events: [kind] });
    const second = await addWebhook(b, { owner: 'beta', events: [kind] });
    await addWebhook(b, { events: [kind] });
    await addWebhook(b, { owner: 'gone', events: [kind] });
    const routes = await b.stores.operational.fanOutToClient(operational(kind), 'beta');
    expect(sorted(routes.map((r) => r.webhookId))).toEqual(sorted([first.id, second.id]));
    expect(await b.stores.operational.fanOutToClient(operational(kind), 'gone')).toEqual([]);
  });
});
