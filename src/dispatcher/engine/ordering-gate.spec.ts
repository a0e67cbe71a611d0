import { MemoryDeliveryOrderStore } from '../../../test/fakes/memory-order';
import { MemoryTables } from '../../../test/fakes/memory-stores';
import { waitFor } from '../../../test/support/wait-for';
import type { ScheduledDelivery } from './scheduler/scheduler-work';
import { OrderingGate } from './ordering-gate';

describe('OrderingGate', () => {
  let tables: MemoryTables;
  let passed: ScheduledDelivery[];
  let failures: string[];
  let gate: OrderingGate;
  /** Reads of the store answered so far: what the gate did with them is done by the next turn. */
  let reads: number;

  /** Counts the store's answers, so that a spec can wait for a read instead of sleeping. */
  class CountingStore extends MemoryDeliveryOrderStore {
    private counted<T>(answer: Promise<T>): Promise<T> {
      return answer.finally(() => reads++);
    }
    override heads(ids: string[]) {
      return this.counted(super.heads(ids));
    }
    override next(ids: string[]) {
      return this.counted(super.next(ids));
    }
  }

  beforeEach(() => {
    tables = new MemoryTables();
    passed = [];
    failures = [];
    reads = 0;
    gate = new OrderingGate(
      new CountingStore(tables),
      (deliveries) => passed.push(...deliveries),
      (what) => failures.push(what),
    );
  });

  /** Deliveries of meeting `key` to `webhookId`, one per event_ts, stored in this order. */
  const keyed = (webhookId: string, key: string, ...ts: number[]) =>
    ts.map((t) => tables.addDelivery(webhookId, { orderKey: key, orderTs: String(t) }));
  const route = (d: { id: string; webhookId: string }) => ({ id: d.id, webhookId: d.webhookId });

  it("passes an unordered webhook's deliveries at once once it knows the webhook", async () => {
    const webhook = tables.addWebhook();
    const [a, b] = [tables.addDelivery(webhook.id), tables.addDelivery(webhook.id)];
    // Not known yet: one read, then passed on.
    expect(gate.admit([route(a)])).toEqual([]);
    await waitFor(() => passed.length === 1, { what: 'the first passed on' });
    expect(gate.admit([route(b)])).toEqual([route(b)]);
  });

  it("passes only each key's head of an ordered webhook, oldest event first", async () => {
    const webhook = tables.addWebhook({ ordering: 'meeting' });
    // Stored out of event_ts order: the order is the platform's, not the arrival's.
    const [m2, m1, m3] = keyed(webhook.id, 'm', 2000, 1000, 3000);
    const [n1] = keyed(webhook.id, 'n', 5000);
    expect(gate.admit([m2, m1, m3, n1].map(route))).toEqual([]);
    await waitFor(() => passed.length === 2, { what: 'the heads' });
    expect(passed.map((d) => d.id).sort()).toEqual([m1.id, n1.id].sort());
    expect(failures).toEqual([]);
  });

  it("hands a key's next on when its head ends, and not before", async () => {
    const webhook = tables.addWebhook({ ordering: 'meeting' });
    const [m1, m2] = keyed(webhook.id, 'm', 1000, 2000);
    gate.admit([m1, m2].map(route));
    await waitFor(() => passed.length === 1, { what: 'the head' });
    expect(passed).toEqual([route(m1)]);

    // Under way (a retry due later): still the head, though m2 is due now.
    Object.assign(m1, { attemptCount: 1, nextAttemptAt: new Date(Date.now() + 60_000) });
    const before = reads;
    gate.ended({ ...route(m1), orderKey: 'm' });
    gate.admit([route(m2)]);
    await waitFor(() => reads === before + 2, { what: 'both reads answered' });
    expect(passed).toEqual([route(m1)]);

    Object.assign(m1, { status: 'succeeded', nextAttemptAt: null });
    gate.ended({ ...route(m1), orderKey: 'm' });
    await waitFor(() => passed.length === 2, { what: 'the next' });
    expect(passed[1]).toEqual(route(m2));
  });

  it('lets a late event go only after the delivery under way ended', async () => {
    const webhook = tables.addWebhook({ ordering: 'meeting' });
    const [m5] = keyed(webhook.id, 'm', 5000);
    m5.leaseUntil = new Date(Date.now() + 60_000); // being sent
    const [m3] = keyed(webhook.id, 'm', 3000);
    gate.admit([route(m3)]);
    await waitFor(() => reads === 1, { what: 'the heads read' });
    expect(passed).toEqual([]);
    Object.assign(m5, { status: 'succeeded', attemptCount: 1, leaseUntil: null });
    gate.ended({ ...route(m5), orderKey: 'm' });
    await waitFor(() => passed.length === 1, { what: 'the late one' });
    expect(passed).toEqual([route(m3)]);
  });

  it('ignores the end of a delivery without a key', () => {
    const webhook = tables.addWebhook({ ordering: 'meeting' });
    const d = tables.addDelivery(webhook.id);
    expect(gate.ended({ ...route(d), orderKey: null })).toEqual([]);
  });

  it('reports a failed read, leaving the deliveries pending', async () => {
    const failing = new OrderingGate(
      {
        ordered: () => Promise.reject(new Error('database down')),
        heads: () => Promise.reject(new Error('database down')),
        next: () => Promise.reject(new Error('database down')),
      },
      (deliveries) => passed.push(...deliveries),
      (what) => failures.push(what),
    );
    const webhook = tables.addWebhook({ ordering: 'meeting' });
    const [m1] = keyed(webhook.id, 'm', 1000);
    expect(failing.admit([route(m1)])).toEqual([]);
    failing.ended({ ...route(m1), orderKey: 'm' });
    await waitFor(() => failures.length === 2, { what: 'both failures reported' });
    expect(passed).toEqual([]);
  });
});
