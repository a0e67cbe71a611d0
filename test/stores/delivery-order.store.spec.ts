import { randomUUID } from 'node:crypto';
import type { DeliveryRef } from '../../src/delivery-record/delivery.store';
import {
  StoreBackend,
  addWebhook,
  attemptResult,
  describeContract,
  endDelivery,
  newEvent,
  quietEarlierWebhooks,
} from '../support/store-backends';

/**
 * The ordering of an ordered webhook's deliveries (docs/receiving.md, "Ordered delivery per
 * meeting"): the SQL of delivery-order.store.ts and test/fakes/memory-order.ts, same cases.
 */
describeContract('DeliveryOrderStore', (backend) => {
  /** A fresh ordered webhook (and an unordered one) and a publish of one meeting's events. */
  const setUp = async (b: StoreBackend) => {
    await quietEarlierWebhooks(b);
    const ordered = await addWebhook(b, { ordering: 'meeting' });
    const unordered = await addWebhook(b);
    /** Publishes an event of meeting `key` that the platform stamped `ts`; its two deliveries. */
    const publish = async (key: string, ts: number) => {
      const event = {
        ...newEvent('job.started'),
        orderKey: key,
        source: {
          platform: 'zoom' as const,
          event: 'meeting.started',
          event_ts: ts,
          account_id: 'acct',
          tracking_id: null,
          via: 'webhook' as const,
        },
      };
      const routes = (await b.stores.events.fanOut(event))!;
      const of = (webhookId: string) => routes.find((r) => r.webhookId === webhookId)!;
      return { ordered: of(ordered.id), unordered: of(unordered.id) };
    };
    return { ordered, unordered, publish };
  };
  const ids = (routes: DeliveryRef[]) => routes.map((r) => r.id).sort();

  it('names the webhooks that order by meeting', async () => {
    const b = backend();
    const { ordered, unordered } = await setUp(b);
    const found = await b.stores.order.ordered([ordered.id, unordered.id, randomUUID()]);
    expect([...found]).toEqual([ordered.id]);
  });

  it("lets only a key's oldest event by event_ts go, whatever order they were stored in", async () => {
    const b = backend();
    const { publish } = await setUp(b);
    const key = randomUUID();
    const second = await publish(key, 2000);
    const first = await publish(key, 1000);
    const third = await publish(key, 3000);
    const other = await publish(randomUUID(), 5000);
    const all = [second, first, third, other];
    expect(ids(await b.stores.order.heads(all.map((d) => d.ordered.id)))).toEqual(
      ids([first.ordered, other.ordered]),
    );
    // The unordered webhook's deliveries of the same events all go at once.
    expect(ids(await b.stores.order.heads(all.map((d) => d.unordered.id)))).toEqual(
      ids(all.map((d) => d.unordered)),
    );
  });

  it('breaks a tie of event_ts by the delivery id', async () => {
    const b = backend();
    const { publish } = await setUp(b);
    const key = randomUUID();
    const tied = [await publish(key, 1000), await publish(key, 1000)].map((d) => d.ordered);
    const [lower] = [...tied].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(await b.stores.order.heads(tied.map((d) => d.id))).toEqual([lower]);
  });

  it('hands the key on when its head ends, once per key, succeeded or failed', async () => {
    const b = backend();
    const { publish } = await setUp(b);
    const key = randomUUID();
    const [first, second, third] = [
      await publish(key, 1000),
      await publish(key, 2000),
      await publish(key, 3000),
    ];
    await endDelivery(b, first.ordered.id, 'succeeded');
    expect(await b.stores.order.next([first.ordered.id, first.ordered.id])).toEqual([
      second.ordered,
    ]);
    await endDelivery(b, second.ordered.id, 'failed');
    expect(await b.stores.order.next([second.ordered.id])).toEqual([third.ordered]);
    await endDelivery(b, third.ordered.id, 'succeeded');
    expect(await b.stores.order.next([third.ordered.id])).toEqual([]);
    // An unordered delivery's end hands nothing on.
    expect(await b.stores.order.next([first.unordered.id])).toEqual([]);
  });

  /**
   * A key whose newer event went first: leased when the older one arrives late, then its
   * attempt failed with a retry due in `retryInMs` (unless null: still leased).
   */
  const newerFirst = async (b: StoreBackend, retryInMs: number | null) => {
    const { publish } = await setUp(b);
    const key = randomUUID();
    const newer = await publish(key, 2000);
    const claimed = await b.stores.deliveries.claim([newer.ordered.id], 60_000, []);
    expect(claimed).toHaveLength(1);
    const older = await publish(key, 1000);
    if (retryInMs !== null) {
      await b.stores.deliveries.recordAttempt({
        deliveryId: newer.ordered.id,
        createdAt: claimed[0].createdAt,
        attempt: 1,
        result: attemptResult(),
        status: 'pending',
        nextAttemptAt: new Date(Date.now() + retryInMs),
      });
    }
    return { newer: newer.ordered, older: older.ordered };
  };

  it('keeps a leased delivery at the head of its key', async () => {
    const b = backend();
    const { newer, older } = await newerFirst(b, null);
    expect(await b.stores.order.heads([older.id, newer.id])).toEqual([]);
  });

  it('keeps a delivery between the attempts of its series at the head, not due yet', async () => {
    const b = backend();
    const { newer, older } = await newerFirst(b, 60_000);
    expect(await b.stores.order.heads([older.id, newer.id])).toEqual([]);
    expect(await b.stores.order.next([older.id])).toEqual([]);
  });

  it('lets a retry that is due go, as the head of its key', async () => {
    const b = backend();
    const { newer, older } = await newerFirst(b, -1000);
    expect(await b.stores.order.heads([older.id, newer.id])).toEqual([newer]);
    expect(await b.stores.order.next([newer.id])).toEqual([newer]);
  });
});
