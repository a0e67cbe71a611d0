import { MemoryWebhookSlots } from '../../../../test/fakes/memory-slots';
import { waitFor } from '../../../../test/support/wait-for';
import { DeliveryScheduler } from './delivery-scheduler';
import type { ScheduledDelivery, SchedulerWork } from './scheduler-work';
import type { DeliveryTarget, WebhookLimit } from '../../../delivery-record/delivery.store';

/** A worker as the scheduler sees it: attempts held open until the test ends them. */
class FakeWork implements SchedulerWork {
  readonly started: string[] = [];
  readonly open = new Map<string, () => void>();
  readonly limitsOf = new Map<string, WebhookLimit>();
  /** Ids the store holds pending for refill, by webhook. */
  readonly pending = new Map<string, string[]>();
  /** Ids another worker holds: the claim skips them. */
  readonly taken = new Set<string>();
  peakOpen = 0;

  limits(webhookIds: string[]): Promise<Map<string, WebhookLimit>> {
    const found = new Map<string, WebhookLimit>();
    for (const id of webhookIds) {
      const limit = this.limitsOf.get(id);
      if (limit) found.set(id, limit);
    }
    return Promise.resolve(found);
  }

  claim(ids: string[]): Promise<DeliveryTarget[]> {
    return Promise.resolve(
      ids
        .filter((id) => !this.taken.has(id))
        .map((id) => ({ id, webhookId: id.split('/')[0] }) as DeliveryTarget),
    );
  }

  start(target: DeliveryTarget, done: () => void): void {
    this.started.push(target.id);
    this.open.set(target.id, done);
    this.peakOpen = Math.max(this.peakOpen, this.open.size);
  }

  /** Ends the attempts open now (all, or those of one webhook). */
  finish(webhookId?: string): void {
    for (const [id, done] of [...this.open]) {
      if (webhookId && !id.startsWith(`${webhookId}/`)) continue;
      this.open.delete(id);
      done();
    }
  }

  leased(): boolean {
    return false;
  }

  claimFailed(): void {}
  slotsFailed(): void {}

  refill(webhookId: string, limit: number, waiting: string[]): Promise<string[]> {
    // Those sent are leased or ended: the store never offers them again.
    const left = (this.pending.get(webhookId) ?? []).filter(
      (id) => !waiting.includes(id) && !this.started.includes(id),
    );
    const given = left.slice(0, limit);
    this.pending.set(webhookId, left.slice(limit));
    return Promise.resolve(given);
  }
}

const deliveries = (webhookId: string, count: number, from = 0): ScheduledDelivery[] =>
  Array.from({ length: count }, (_, i) => ({ id: `${webhookId}/${from + i}`, webhookId }));

const DEFAULTS: WebhookLimit = { maxInFlight: 10, rateLimit: null };

describe('DeliveryScheduler', () => {
  let slots: MemoryWebhookSlots;
  let schedulers: DeliveryScheduler[];
  const scheduler = (work: FakeWork, capacity = 50, waitingPerWebhook = 1000) => {
    const s = new DeliveryScheduler(
      { capacity, waitingPerWebhook },
      DEFAULTS,
      slots.forProcess(),
      work,
    );
    schedulers.push(s);
    return s;
  };

  beforeEach(() => {
    slots = new MemoryWebhookSlots();
    schedulers = [];
  });
  afterEach(() => schedulers.forEach((s) => s.close()));

  it("sends a waiting delivery as soon as one of its webhook's slots is given back", async () => {
    const work = new FakeWork();
    work.limitsOf.set('a', { maxInFlight: 2, rateLimit: null });
    scheduler(work).submit(deliveries('a', 5));

    await waitFor(() => work.started.length === 2, { what: 'two attempts' });
    work.finish();
    await waitFor(() => work.started.length === 4, { what: 'two more, at once' });
    work.finish();
    await waitFor(() => work.started.length === 5, { what: 'the last' });
    expect(work.peakOpen).toBe(2);
  });

  it('holds one webhook to its max_in_flight across two processes', async () => {
    const [one, two] = [new FakeWork(), new FakeWork()];
    for (const work of [one, two]) work.limitsOf.set('a', { maxInFlight: 3, rateLimit: null });
    scheduler(one).submit(deliveries('a', 10));
    scheduler(two).submit(deliveries('a', 10, 10));

    await waitFor(() => one.open.size + two.open.size === 3, { what: 'three attempts' });
    // The first keeps its slots for its next deliveries only until it learns that the second
    // waits; then it gives them back, reserved for the second, which is woken at once.
    for (let round = 0; round < 6; round++) {
      const before = one.started.length + two.started.length;
      one.finish();
      two.finish();
      await waitFor(() => one.started.length + two.started.length > before, { what: 'more' });
      expect(one.open.size + two.open.size).toBeLessThanOrEqual(3);
      expect(slots.heldBy('a')).toBeLessThanOrEqual(3);
    }
    expect(two.started.length).toBeGreaterThan(0);
    expect(one.started.length).toBeGreaterThan(0);
  });

  it("lets other webhooks use the process's slots while one receiver holds its own", async () => {
    const work = new FakeWork();
    const s = scheduler(work, 12);
    s.submit(deliveries('slow', 100));
    await waitFor(() => work.started.length === 10, { what: 'the slow webhook at its limit' });
    s.submit(deliveries('fast', 5));

    // The last two of twelve are the reserve: one each to webhooks holding none.
    await waitFor(() => work.started.length === 11, { what: 'the fast webhook served beside it' });
    while (work.started.length < 15) {
      const before = work.started.length;
      work.finish('fast');
      await waitFor(() => work.started.length > before, { what: 'the next fast deliveries' });
    }
    await waitFor(() => work.started.filter((id) => id.startsWith('fast/')).length === 5, {
      what: 'every fast delivery',
    });
    // Never more than its own ten slots to the slow one, whatever the process had free.
    expect(work.started.filter((id) => id.startsWith('slow/'))).toHaveLength(10);
  });

  it("keeps the last fifth of the process's slots for webhooks holding none, whatever max_in_flight allows", async () => {
    const work = new FakeWork();
    // max_in_flight above the process's capacity, as a webhook may set it.
    for (const hog of ['hog1', 'hog2'])
      work.limitsOf.set(hog, { maxInFlight: 100, rateLimit: null });
    const s = scheduler(work, 10);
    s.submit(deliveries('hog1', 100));
    s.submit(deliveries('hog2', 100));
    // Two receivers that never answer: their attempts stay open.
    await waitFor(() => work.started.length === 8, { what: 'the hogs at 8 of 10 slots' });
    s.submit(deliveries('a', 3));
    s.submit(deliveries('b', 3));
    await waitFor(() => work.started.length === 10, { what: 'a and b served beside them' });
    const of = (webhook: string) => work.started.filter((id) => id.startsWith(`${webhook}/`));
    expect([of('a'), of('b')]).toEqual([['a/0'], ['b/0']]);
    // The rest of a and b go on the slots their own attempts give back, never a hog's.
    for (let n = 1; n < 3; n++) {
      work.finish('a');
      work.finish('b');
      await waitFor(() => of('a').length > n && of('b').length > n, { what: `a/${n}, b/${n}` });
    }
    expect(of('hog1').length + of('hog2').length).toBe(8);
  });

  it("keeps an idle slot a short while for the webhook's next delivery, then gives it back", async () => {
    const work = new FakeWork();
    work.limitsOf.set('a', { maxInFlight: 1, rateLimit: null });
    const s = scheduler(work);
    s.submit(deliveries('a', 1));
    await waitFor(() => work.started.length === 1, { what: 'the first attempt' });
    work.finish();
    // Nothing waits: the slot stays with this process, and the next delivery takes it at once.
    expect(slots.heldBy('a')).toBe(1);
    s.submit(deliveries('a', 1, 1));
    await waitFor(() => work.started.length === 2, { what: 'the next, on the kept slot' });
    expect(slots.heldBy('a')).toBe(1);
    work.finish();
    // IDLE_KEEP_MS later, with nothing more to send, it goes back.
    await waitFor(() => slots.heldBy('a') === 0, { what: 'the idle slot given back' });
    expect(s.inFlight).toBe(0);
  });

  it('starts no more than rate_limit attempts in a second, and the rest once it allows', async () => {
    const work = new FakeWork();
    work.limitsOf.set('a', { maxInFlight: 10, rateLimit: 3 });
    const s = scheduler(work);
    s.submit(deliveries('a', 5));
    await waitFor(() => work.started.length === 3, { what: 'three attempts' });
    work.finish();
    expect(work.started).toHaveLength(3);
    await waitFor(() => work.started.length === 5, { what: 'the others, a second later' });
  });

  it('gives a slot back at once when the claim finds its delivery taken elsewhere', async () => {
    const work = new FakeWork();
    work.limitsOf.set('a', { maxInFlight: 1, rateLimit: null });
    work.taken.add('a/0');
    scheduler(work).submit(deliveries('a', 2));
    await waitFor(() => work.started.length === 1, { what: 'the other delivery' });
    expect(work.started).toEqual(['a/1']);
  });

  it('lets a backlog past its lane go and reads it back as the lane drains', async () => {
    const work = new FakeWork();
    const s = scheduler(work, 50, 4);
    const all = deliveries('a', 12);
    work.pending.set(
      'a',
      all.map((d) => d.id),
    );
    expect(s.submit(all)).toEqual(all.slice(4));
    for (let round = 0; round < 12 && work.started.length < 12; round++) {
      await waitFor(() => work.open.size > 0, { what: 'attempts' });
      work.finish();
    }
    await waitFor(() => work.started.length === 12, { what: 'every delivery' });
    expect(new Set(work.started).size).toBe(12);
  });
});
