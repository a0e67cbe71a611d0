import { DispatcherService } from '../src/dispatcher/dispatcher.service';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

const SLOW_MS = 5000;

/**
 * SPEC §9 fairness: a receiver that holds every request does not take the worker's delivery
 * slots from other webhooks (DELIVERY_CONCURRENCY_PER_WEBHOOK, default 10, of 50).
 */
describe('fairness between webhooks', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([
      // The attempt timeout above the slow receiver's delay: its requests stay in flight.
      startTestApp({ env: { DELIVERY_TIMEOUT_MS: '10000' } }),
      startReceiver(),
    ]);
  });
  afterAll(() => Promise.all([receiver.close(), t.close()]));

  it("serves another webhook's deliveries promptly while 100 wait on a receiver that holds each for 5 s", async () => {
    const dispatcher = t.app.get(DispatcherService);
    const slow = receiver.route({ delaysMs: [SLOW_MS] }, 'slow');
    const fast = receiver.route({}, 'fast');
    await createWebhook(t, { url: slow.url, events: ['job.started'] });
    await createWebhook(t, { url: fast.url, events: ['job.completed'] });

    await Promise.all(
      Array.from({ length: 100 }, (_, n) =>
        dispatcher.publish({ kind: 'job.started', data: { n } }),
      ),
    );
    await waitFor(() => receiver.requests(slow.path).length >= 10, { what: '10 slow requests' });

    // How fast they arrive is bench/'s business; here, that they arrive while the slow wait.
    for (let n = 0; n < 20; n++) {
      await dispatcher.publish({ kind: 'job.completed', data: { n } });
      await waitFor(() => receiver.requests(fast.path)[n], { what: `fast delivery ${n}` });
    }

    // No more than 10 requests to the slow receiver were ever in flight at once: the 11th
    // can only have started once one of the first ten was answered.
    const slowRequests = receiver.requests(slow.path);
    const first = slowRequests[0].receivedAt;
    expect(slowRequests.filter((r) => r.receivedAt < first + SLOW_MS - 100)).toHaveLength(10);
  });
});
