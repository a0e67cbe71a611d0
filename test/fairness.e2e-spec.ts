import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { reservedSlots } from '../src/dispatcher/engine/scheduler/fairness';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

/**
 * docs/api.md#receiver-health fairness: a receiver that holds every request does not take the worker's delivery
 * slots from other webhooks (DELIVERY_CONCURRENCY_PER_WEBHOOK, default 10, of 50). How fast the
 * others go meanwhile is measured in bench/, not here.
 */
describe('fairness between webhooks', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([
      // A long attempt deadline: the held requests stay in flight throughout.
      startTestApp({ env: { DELIVERY_TIMEOUT_MS: '60000' } }),
      startReceiver(),
    ]);
  });
  afterAll(() => Promise.all([receiver.close(), t.close()]));

  it("serves another webhook's deliveries while 100 wait on a receiver that holds every request", async () => {
    const dispatcher = t.app.get(DispatcherService);
    const slow = receiver.route({}, 'slow');
    const fast = receiver.route({}, 'fast');
    receiver.hold(slow.path);
    await createWebhook(t, { url: slow.url, events: ['job.started'] });
    await createWebhook(t, { url: fast.url, events: ['job.completed'] });

    await Promise.all(
      Array.from({ length: 100 }, (_, n) =>
        dispatcher.publish({ kind: 'job.started', data: { n } }),
      ),
    );
    await waitFor(() => receiver.requests(slow.path).length >= 10, { what: '10 slow requests' });

    // Every one of the other webhook's deliveries arrives while the slow receiver still holds
    // its ten: they never waited for a slot of the slow webhook.
    for (let n = 0; n < 20; n++) {
      await dispatcher.publish({ kind: 'job.completed', data: { n } });
      await waitFor(() => receiver.requests(fast.path)[n], { what: `fast delivery ${n}` });
    }
    // No more than 10 requests to the slow receiver were ever in flight at once: none of them
    // has been answered, and no 11th arrived.
    expect(receiver.requests(slow.path)).toHaveLength(10);
    receiver.release(slow.path);
  });
});

/**
 * A webhook's max_in_flight may be above DELIVERY_CONCURRENCY: one whose receiver never
 * answers still leaves the reserve of the process's slots (docs/operations.md, "Fairness") to
 * the other webhooks.
 */
describe('fairness when one max_in_flight exceeds the process', () => {
  const CONCURRENCY = 20;
  const HOG_SLOTS = CONCURRENCY - reservedSlots(CONCURRENCY);
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([
      startTestApp({
        env: { DELIVERY_TIMEOUT_MS: '60000', DELIVERY_CONCURRENCY: String(CONCURRENCY) },
      }),
      startReceiver(),
    ]);
  });
  afterAll(() => Promise.all([receiver.close(), t.close()]));

  it("serves another webhook while one with max_in_flight 100 holds all it may of the process's 20 slots", async () => {
    const dispatcher = t.app.get(DispatcherService);
    const hog = receiver.route({}, 'hog');
    const other = receiver.route({}, 'other');
    receiver.hold(hog.path);
    const hogHook = await createWebhook(t, { url: hog.url, events: ['job.started'] });
    const patched = await request(t.baseUrl, 'PATCH', `/api/webhooks/${hogHook.id}`, {
      token: await t.token('alpha'),
      body: { max_in_flight: 100 },
    });
    expect([patched.status, patched.body.max_in_flight]).toEqual([200, 100]);
    await createWebhook(t, { url: other.url, events: ['job.completed'] });

    await Promise.all(
      Array.from({ length: 60 }, (_, n) =>
        dispatcher.publish({ kind: 'job.started', data: { n } }),
      ),
    );
    await waitFor(() => receiver.requests(hog.path).length >= HOG_SLOTS, {
      what: `${HOG_SLOTS} requests to the hog`,
    });

    // Each of the other webhook's deliveries arrives while the hog still holds every request it
    // got: none of them waited for one of its attempts to end.
    for (let n = 0; n < 10; n++) {
      await dispatcher.publish({ kind: 'job.completed', data: { n } });
      await waitFor(() => receiver.requests(other.path)[n], {
        what: `delivery ${n} to the other webhook (the hog holds ${receiver.heldRequests().length})`,
      });
    }
    // The hog never had more than its share of the process: nothing answered, no more arrived.
    expect(receiver.heldRequests()).toHaveLength(HOG_SLOTS);
    expect(receiver.requests(hog.path)).toHaveLength(HOG_SLOTS);
    receiver.release(hog.path);
  });
});
