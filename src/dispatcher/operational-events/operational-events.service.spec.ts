import { MemoryOperationalEventStore } from '../../../test/fakes/operational-event-store';
import { MemoryTables } from '../../../test/fakes/memory-stores';
import type { DeliveryRef } from '../../delivery-record/delivery.store';
import type { DispatcherService } from '../publish/dispatcher.service';
import { EndedAttempt, OperationalEventsService } from './operational-events.service';

function service(store = new MemoryOperationalEventStore(new MemoryTables(), ['admin'])) {
  const queued: DeliveryRef[] = [];
  const dispatcher = {
    queueDeliveries: (deliveries: DeliveryRef[]) => {
      queued.push(...deliveries);
      return Promise.resolve();
    },
  } as unknown as DispatcherService;
  return { store, queued, operational: new OperationalEventsService(store, dispatcher) };
}

/** An attempt that ended its delivery failed (and disabled nothing). */
const failed = (deliveryId: string, webhookId: string, event: string): EndedAttempt => ({
  deliveryId,
  webhookId,
  event,
  disabled: null,
  failed: true,
});

describe('OperationalEventsService', () => {
  it('publishes bridge.delivery.failed from the record to the subscribers, and queues them', async () => {
    const { store, queued, operational } = service();
    const w1 = store.tables.addWebhook();
    const w2 = store.tables.addWebhook({ events: ['bridge.delivery.failed'] });
    const w3 = store.tables.addWebhook({ events: ['job.started', 'bridge.delivery.failed'] });
    store.tables.addWebhook({ ownerClientId: 'client-b', events: ['bridge.delivery.failed'] });
    const d1 = store.tables.addDelivery(w1.id, {
      eventId: 'e1',
      status: 'failed',
      attemptCount: 4,
      lastStatusCode: null,
      lastError: 'timed out after 10000 ms',
    });
    await operational.attemptEnded(failed(d1.id, w1.id, 'job.started'));
    const [event] = store.published;
    expect(event).toMatchObject({ kind: 'bridge.delivery.failed', aboutWebhookId: w1.id });
    expect(JSON.parse(event.body)).toEqual({
      id: event.id,
      event: 'bridge.delivery.failed',
      created_at: event.createdAt.toISOString(),
      data: {
        delivery_id: d1.id,
        webhook_id: w1.id,
        event: 'job.started',
        event_id: 'e1',
        attempt_count: 4,
        last_status_code: null,
        last_error: 'timed out after 10000 ms',
      },
      source: null,
    });
    expect(queued.map((d) => d.webhookId)).toEqual([w2.id, w3.id]);
  });

  it('publishes bridge.webhook.disabled with the webhook as it was disabled', async () => {
    const { store, operational } = service();
    const disabledAt = new Date('2026-01-01T10:00:00.123Z');
    const w1 = store.tables.addWebhook({
      url: 'https://hooks.example.com/x',
      active: false,
      disabledAt,
      disabledReason: 'gone',
    });
    store.tables.addWebhook({ events: ['bridge.webhook.disabled'] });
    await operational.attemptEnded({
      ...failed('d0', w1.id, 'job.started'),
      disabled: 'gone',
      failed: false,
    });
    expect(store.published[0].data).toEqual({
      webhook_id: w1.id,
      url: 'https://hooks.example.com/x',
      reason: 'gone',
      disabled_at: '2026-01-01T10:00:00.123Z',
    });
  });

  it('publishes the disabling first, then the failed delivery, when an attempt did both', async () => {
    const { store, queued, operational } = service();
    const w1 = store.tables.addWebhook({ active: false, disabledAt: new Date() });
    const w2 = store.tables.addWebhook({
      events: ['bridge.delivery.failed', 'bridge.webhook.disabled'],
    });
    const d1 = store.tables.addDelivery(w1.id, { status: 'failed', attemptCount: 1 });
    await operational.attemptEnded({ ...failed(d1.id, w1.id, 'job.started'), disabled: 'gone' });
    expect(store.published.map((e) => e.kind)).toEqual([
      'bridge.webhook.disabled',
      'bridge.delivery.failed',
    ]);
    expect(queued.map((d) => d.webhookId)).toEqual([w2.id, w2.id]);
  });

  it('reports nothing about a delivery of a bridge.* event, nor a disabling it caused', async () => {
    const { store, queued, operational } = service();
    const w1 = store.tables.addWebhook({ active: false, disabledAt: new Date() });
    store.tables.addWebhook({ events: ['bridge.delivery.failed', 'bridge.webhook.disabled'] });
    const d1 = store.tables.addDelivery(w1.id, { status: 'failed', attemptCount: 2 });
    await operational.attemptEnded({
      ...failed(d1.id, w1.id, 'bridge.delivery.failed'),
      disabled: 'failing',
    });
    await operational.attemptEnded({
      ...failed(d1.id, w1.id, 'bridge.webhook.disabled'),
      disabled: 'failing',
    });
    expect(store.published).toEqual([]);
    expect(queued).toEqual([]);
  });

  it('logs, and does not throw, when the event cannot be stored', async () => {
    const { store, operational } = service();
    const w1 = store.tables.addWebhook();
    const d1 = store.tables.addDelivery(w1.id, { status: 'failed', attemptCount: 2 });
    store.fanOut = () => Promise.reject(new Error('database down'));
    await expect(
      operational.attemptEnded(failed(d1.id, w1.id, 'job.started')),
    ).resolves.toBeUndefined();
  });

  it('publishes bridge.reconciliation.completed to the subscribed webhooks of bridge:admin clients', async () => {
    const { store, queued, operational } = service();
    const w9 = store.tables.addWebhook({
      ownerClientId: 'admin',
      events: ['bridge.reconciliation.completed'],
    });
    store.tables.addWebhook({ events: ['bridge.reconciliation.completed'] });
    const run = {
      id: 'r1',
      trigger: 'gap',
      since: '2026-01-01T10:00:00.000Z',
      until: '2026-01-01T10:05:00.000Z',
      status: 'partial',
      created: { 'meeting.participant_joined': 3 },
    };
    await operational.reconciliationCompleted(run);
    expect(JSON.parse(store.published[0].body)).toMatchObject({
      event: 'bridge.reconciliation.completed',
      data: run,
      source: null,
    });
    expect(queued.map((d) => d.webhookId)).toEqual([w9.id]);
  });
});
