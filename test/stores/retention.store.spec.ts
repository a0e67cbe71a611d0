import { DeletedRows, RetentionTable } from '../../src/retention/retention.store';
import {
  StoreBackend,
  describeContract,
  endDelivery,
  newInboundEvent,
  oneDelivery,
} from '../support/store-backends';

/** A cutoff after every row the cases make: each row is old enough. */
const later = () => new Date(Date.now() + 60_000);
const deleted = (rows: Partial<DeletedRows>): DeletedRows => ({
  deliveries: 0,
  deliveryAttempts: 0,
  events: 0,
  inboundEvents: 0,
  attendance: 0,
  ...rows,
});

/** Deletes what earlier cases left that retention may delete, so that counts are a case's own. */
async function drain(b: StoreBackend): Promise<void> {
  for (const table of [
    'deliveries',
    'events',
    'inbound_events',
    'attendance',
  ] as RetentionTable[]) {
    for (;;) {
      const rows = await b.stores.retention.deleteBatch(table, later(), 1000);
      if (Object.values(rows).every((n) => n === 0)) break;
    }
  }
}

describeContract('RetentionStore', (backend) => {
  beforeEach(() => drain(backend()));

  it('deletes ended deliveries older than the cutoff with their attempts, a batch at a time; never a pending one', async () => {
    const b = backend();
    for (let i = 0; i < 3; i++) {
      const { id } = await oneDelivery(b);
      await endDelivery(b, id, i === 0 ? 'succeeded' : 'failed');
    }
    const pending = await oneDelivery(b);
    const retention = b.stores.retention;
    expect(await retention.deleteBatch('deliveries', new Date(0), 10)).toEqual(deleted({}));
    expect(await retention.deleteBatch('deliveries', later(), 2)).toEqual(
      deleted({ deliveries: 2, deliveryAttempts: 2 }),
    );
    expect(await retention.deleteBatch('deliveries', later(), 2)).toEqual(
      deleted({ deliveries: 1, deliveryAttempts: 1 }),
    );
    expect(await retention.deleteBatch('deliveries', later(), 2)).toEqual(deleted({}));
    expect(await b.delivery(pending.id)).toMatchObject({ status: 'pending' });
  });

  it('deletes an event only once none of its deliveries is left', async () => {
    const b = backend();
    const { id } = await oneDelivery(b);
    const retention = b.stores.retention;
    expect(await retention.deleteBatch('events', later(), 10)).toEqual(deleted({}));
    await endDelivery(b, id, 'failed');
    await retention.deleteBatch('deliveries', later(), 10);
    expect(await retention.deleteBatch('events', later(), 10)).toEqual(deleted({ events: 1 }));
  });

  it('deletes stored platform events older than the cutoff, a batch at a time', async () => {
    const b = backend();
    for (let i = 0; i < 3; i++) await b.stores.inbound.insert(newInboundEvent('meeting.started'));
    const retention = b.stores.retention;
    expect(await retention.deleteBatch('inbound_events', new Date(0), 10)).toEqual(deleted({}));
    expect(await retention.deleteBatch('inbound_events', later(), 2)).toEqual(
      deleted({ inboundEvents: 2 }),
    );
    expect(await retention.deleteBatch('inbound_events', later(), 2)).toEqual(
      deleted({ inboundEvents: 1 }),
    );
  });

  it('purges nothing while no account has left', async () => {
    expect(await backend().stores.retention.purgeAccounts()).toEqual(deleted({}));
  });

  it('runs the work of one holder of the lock at a time', async () => {
    const retention = backend().stores.retention;
    let inner: boolean | undefined;
    const ran = await retention.exclusively(async () => {
      inner = await retention.exclusively(() => Promise.resolve());
    });
    expect([ran, inner]).toEqual([true, false]);
    // Released once the work is done, even when it failed.
    await expect(retention.exclusively(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await retention.exclusively(() => Promise.resolve())).toBe(true);
  });
});
