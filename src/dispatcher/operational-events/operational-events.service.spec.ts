import { MemoryOperationalEventStore } from '../../../test/fakes/operational-event-store';
import type { DeliveryRef } from '../../delivery-record/delivery.store';
import type { DispatcherService } from '../publish/dispatcher.service';
import { OperationalEventsService } from './operational-events.service';

function service(store = new MemoryOperationalEventStore()) {
  const queued: DeliveryRef[] = [];
  const dispatcher = {
    queueDeliveries: (deliveries: DeliveryRef[]) => {
      queued.push(...deliveries);
      return Promise.resolve();
    },
  } as unknown as DispatcherService;
  return { store, queued, operational: new OperationalEventsService(store, dispatcher) };
}

describe('OperationalEventsService', () => {
  it('publishes bridge.delivery.failed from the record to the subscribers, and queues them', async () => {
    const { store, queued, operational } = service();
    store.failed.set('d1', {
      eventId: 'e1',
      attemptCount: 4,
      lastStatusCode: null,
      lastError: 'timed out after 10000 ms',
    });
    store.subscribers.set('w1', { 'bridge.delivery.failed': ['w2', 'w3'] });
    await operational.deliveryFailed({ deliveryId: 'd1', webhookId: 'w1', event: 'job.started' });
    const [event] = store.published;
    expect(event).toMatchObject({ kind: 'bridge.delivery.failed', aboutWebhookId: 'w1' });
    expect(JSON.parse(event.body)).toEqual({
      id: event.id,
      event: 'bridge.delivery.failed',
      created_at: event.createdAt.toISOString(),
      data: {
        delivery_id: 'd1',
        webhook_id: 'w1',
        event: 'job.started',
        event_id: 'e1',
        attempt_count: 4,
        last_status_code: null,
        last_error: 'timed out after 10000 ms',
      },
      source: null,
    });
    expect(queued.map((d) => d.webhookId)).toEqual(['w2', 'w3']);
  });

  it('publishes bridge.webhook.disabled with the webhook as it was disabled', async () => {
    const { store, operational } = service();
    const disabledAt = new Date('2026-01-01T10:00:00.123Z');
    store.disabled.set('w1', { url: 'https://hooks.example.com/x', disabledAt });
    store.subscribers.set('w1', { 'bridge.webhook.disabled': ['w2'] });
    await operational.webhookDisabled('w1', 'gone', 'job.started');
    expect(store.published[0].data).toEqual({
      webhook_id: 'w1',
      url: 'https://hooks.example.com/x',
      reason: 'gone',
      disabled_at: '2026-01-01T10:00:00.123Z',
    });
  });

  it('reports nothing about a delivery of a bridge.* event, nor a disabling it caused', async () => {
    const { store, queued, operational } = service();
    store.failed.set('d1', { eventId: 'e1', attemptCount: 2, lastStatusCode: 500, lastError: 'x' });
    store.disabled.set('w1', { url: 'https://h.example', disabledAt: new Date() });
    store.subscribers.set('w1', {
      'bridge.delivery.failed': ['w2'],
      'bridge.webhook.disabled': ['w2'],
    });
    await operational.deliveryFailed({
      deliveryId: 'd1',
      webhookId: 'w1',
      event: 'bridge.delivery.failed',
    });
    await operational.webhookDisabled('w1', 'failing', 'bridge.webhook.disabled');
    expect(store.published).toEqual([]);
    expect(queued).toEqual([]);
  });

  it('logs, and does not throw, when the event cannot be stored', async () => {
    const { store, operational } = service();
    store.failed.set('d1', { eventId: 'e1', attemptCount: 2, lastStatusCode: 500, lastError: 'x' });
    store.fanOut = () => Promise.reject(new Error('database down'));
    await expect(
      operational.deliveryFailed({ deliveryId: 'd1', webhookId: 'w1', event: 'job.started' }),
    ).resolves.toBeUndefined();
  });

  it('publishes bridge.reconciliation.completed to the subscribed webhooks of bridge:admin clients', async () => {
    const { store, queued, operational } = service();
    store.adminSubscribers['bridge.reconciliation.completed'] = ['w9'];
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
    expect(queued.map((d) => d.webhookId)).toEqual(['w9']);
  });
});
