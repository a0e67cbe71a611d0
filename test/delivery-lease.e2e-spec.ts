import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { DeliveryStore, PgDeliveryStore } from '../src/delivery-record/delivery.store';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { query } from '../src/database/query';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

interface LeaseRow {
  status: string;
  lease_until: string | null;
  /** Seconds from the delivery's creation to its lease's end. */
  lease_s: number | null;
}

const leaseOf = async (t: TestApp, id: string): Promise<LeaseRow> => {
  const [row] = await t.app.get(DataSource).query<LeaseRow[]>(
    `SELECT status, lease_until::text AS lease_until,
         extract(epoch FROM lease_until - created_at)::float AS lease_s
       FROM deliveries WHERE id = $1`,
    [id],
  );
  return row;
};

describe('leases taken as deliveries are stored (role all)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    // DELIVERY_TIMEOUT_MS 2000 (the test app's): an attempt's lease is 7 s, one taken as the
    // delivery is stored twice that.
    t = await startTestApp();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('stores the delivery of a platform event leased to this process, which sends it on that lease', async () => {
    const route = receiver.route();
    await createWebhook(t, { url: route.url, events: ['job.started'] });
    receiver.hold(route.path);
    const uuid = `lease-${randomBytes(6).toString('hex')}`;

    expect((await sendZoomEvent(t.baseUrl, meetingStarted(uuid))).status).toBe(200);

    const [held] = await waitFor(
      () => receiver.heldRequests().length === 1 && receiver.heldRequests(),
      {
        what: 'the notification in flight',
      },
    );
    const id = String(held.headers['x-service-delivery']);
    const inFlight = await leaseOf(t, id);
    expect(inFlight.status).toBe('pending');
    // The lease of the ingest statement (twice a claim's 7 s, from the statement's own time,
    // which is the delivery's creation time), not one a claim renewed later.
    expect(inFlight.lease_s).toBeCloseTo(14, 2);

    receiver.release(route.path);
    await waitFor(async () => (await leaseOf(t, id)).status === 'succeeded', {
      what: 'the attempt recorded',
    });
    expect((await leaseOf(t, id)).lease_until).toBeNull();
  });
});

describe('DeliveryStore leases on PostgreSQL', () => {
  let t: TestApp;
  let store: DeliveryStore;

  beforeAll(async () => {
    // No worker (and so no DeliveryStore provider): what is published stays pending and
    // unleased for the store to work on.
    t = await startTestApp({ env: { APP_ROLE: 'api' } });
    store = new PgDeliveryStore(t.app.get(DataSource));
  });
  afterAll(() => t.close());

  it('renews a lease only by its own value, and gives one up only by it', async () => {
    const receiver = await startReceiver();
    try {
      await createWebhook(t, { url: receiver.route().url, events: ['job.started'] });
      const {
        deliveryIds: [id],
      } = await t.app.get(DispatcherService).publish({ kind: 'job.started', data: {} });
      // As the ingest statement leases it for the process that stores it.
      const [{ lease }] = await query<{ lease: string }>(
        t.app.get(DataSource),
        `UPDATE deliveries SET lease_until = now() + interval '1 minute' WHERE id = $1
         RETURNING lease_until::text AS lease`,
        [id],
      );

      expect(await store.claim([id], 60_000)).toEqual([]);
      const [renewed] = await store.claim([id], 60_000, [lease]);
      expect(renewed).toMatchObject({ id, attemptCount: 0, status: 'pending' });
      const after = (await leaseOf(t, id)).lease_until!;
      expect(after).not.toBe(lease);

      // The old value no longer names the lease: nothing is given up.
      await store.release([id], [lease], [renewed.createdAt]);
      expect((await leaseOf(t, id)).lease_until).toBe(after);
      await store.release([id], [after], [renewed.createdAt]);
      expect((await leaseOf(t, id)).lease_until).toBeNull();
    } finally {
      await receiver.close();
    }
  });
});
