import { DeliveryLanes, LaneLimits } from './delivery-lanes';
import type { DeliveryRoute, DeliveryTarget } from './delivery.store';

/** A claim the test answers by hand, as PostgreSQL would: with the ids it leased. */
interface PendingClaim {
  ids: string[];
  answer(leased?: string[]): Promise<void>;
  fail(error: Error): Promise<void>;
}

const target = (route: DeliveryRoute): DeliveryTarget =>
  ({ id: route.id, webhookId: route.webhookId }) as DeliveryTarget;

const settle = () => new Promise((resolve) => setImmediate(resolve));

function lanes(limits: Partial<LaneLimits> = {}) {
  const claims: PendingClaim[] = [];
  const started = new Map<string, () => void>();
  const failed: string[][] = [];
  const sut = new DeliveryLanes(
    { capacity: 10, perWebhook: 3, waitingPerWebhook: 100, claimsInFlight: 1, ...limits },
    {
      claim: (ids) =>
        new Promise<DeliveryTarget[]>((resolve, reject) => {
          const routes = new Map<string, DeliveryRoute>();
          claims.push({
            ids,
            answer: async (leased = ids) => {
              resolve(leased.map((id) => target(routes.get(id) ?? { id, webhookId: byId(id) })));
              await settle();
            },
            fail: async (error) => {
              reject(error);
              await settle();
            },
          });
        }),
      start: (t, release) => started.set(t.id, release),
      claimFailed: (ids) => failed.push(ids),
    },
  );
  return { sut, claims, started, failed };
}

// Ids name their webhook: "a1" goes to webhook "a".
const byId = (id: string) => id.replace(/\d+$/, '');
const routes = (...ids: string[]): DeliveryRoute[] =>
  ids.map((id) => ({ id, webhookId: byId(id) }));
const many = (webhook: string, n: number) =>
  routes(...Array.from({ length: n }, (_, i) => `${webhook}${i + 1}`));

describe('DeliveryLanes', () => {
  it('claims no more of one webhook than its free slots, and the rest once slots free', async () => {
    const { sut, claims, started } = lanes();
    sut.add(many('a', 5));
    expect(claims.map((c) => c.ids)).toEqual([['a1', 'a2', 'a3']]);
    await claims[0].answer();
    expect([...started.keys()]).toEqual(['a1', 'a2', 'a3']);
    expect(claims).toHaveLength(1);

    started.get('a1')!();
    started.get('a2')!();
    await settle();
    // Both slots freed within one turn go into one claim.
    expect(claims.map((c) => c.ids)).toEqual([
      ['a1', 'a2', 'a3'],
      ['a4', 'a5'],
    ]);
    expect(sut.inFlight).toBe(3);
  });

  it('serves other webhooks while one is at its limit, and takes lanes in turn', async () => {
    const { sut, claims } = lanes({ capacity: 5 });
    sut.add([...many('a', 6), ...routes('b1', 'b2', 'c1')]);
    // One from each lane, round and round, within the webhook limit of 3 and capacity of 5.
    expect(claims[0].ids).toEqual(['a1', 'b1', 'c1', 'a2', 'b2']);
    await claims[0].answer();
    expect(sut.waitingCount).toBe(4);
  });

  it('gives back the slots of deliveries the claim did not lease (held elsewhere, final, gone)', async () => {
    const { sut, claims, started } = lanes();
    sut.add(many('a', 4));
    await claims[0].answer(['a2']);
    expect([...started.keys()]).toEqual(['a2']);
    // a1 and a3 were not leased: their slots are free again and a4 is claimed.
    expect(claims[1].ids).toEqual(['a4']);
  });

  it('keeps at most claimsInFlight claims running; slots freed meanwhile go into the next', async () => {
    const { sut, claims } = lanes({ perWebhook: 10 });
    sut.add(routes('a1'));
    sut.add(routes('a2', 'a3'));
    sut.add(routes('a4'));
    expect(claims).toHaveLength(1);
    await claims[0].answer();
    expect(claims.map((c) => c.ids)).toEqual([['a1'], ['a2', 'a3', 'a4']]);
  });

  it('hands back what does not fit in a lane and ignores a delivery it already holds', () => {
    const { sut } = lanes({ capacity: 1, perWebhook: 1, waitingPerWebhook: 2 });
    expect(sut.add(routes('a1'))).toEqual([]);
    const overflow = sut.add([...routes('a2', 'a3', 'a3', 'a4', 'b1')]);
    // a1 is being claimed; a2 and a3 wait (a3 once); a4 does not fit; b1 has a lane of its own.
    expect(overflow).toEqual(routes('a4'));
    expect(sut.waitingCount).toBe(3);
  });

  it('frees the slots of a failed claim and reports it; its deliveries stay pending for the sweeper', async () => {
    const { sut, claims, failed } = lanes();
    sut.add(many('a', 2));
    await claims[0].fail(new Error('connection reset'));
    expect(failed).toEqual([['a1', 'a2']]);
    expect(sut.inFlight).toBe(0);
    expect(sut.waitingCount).toBe(0);
  });

  it('releases a slot once however often its release is called', async () => {
    const { sut, claims, started } = lanes({ perWebhook: 1 });
    sut.add(many('a', 3));
    await claims[0].answer();
    const release = started.get('a1')!;
    release();
    release();
    await settle();
    expect(claims).toHaveLength(2);
    expect(sut.inFlight).toBe(1);
  });

  it('claims nothing after close and returns what was waiting', async () => {
    const { sut, claims, started } = lanes({ perWebhook: 1 });
    sut.add([...many('a', 3), ...routes('b1')]);
    expect(claims[0].ids).toEqual(['a1', 'b1']);
    expect(sut.close()).toEqual(routes('a2', 'a3'));
    await claims[0].answer();
    started.get('a1')!();
    await settle();
    expect(claims).toHaveLength(1);
  });

  describe('drainMs: when to offer again what did not fit', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
    afterEach(() => jest.useRealTimers());

    it('is at least a second, and at most a minute', async () => {
      const { sut, claims, started } = lanes({ perWebhook: 1, waitingPerWebhook: 100_000 });
      expect(sut.drainMs(routes('a1'))).toBe(1000);
      sut.add(many('a', 50_001));
      await claims[0].answer();
      jest.advanceTimersByTime(10);
      started.get('a1')!();
      // 50,000 waiting, one at a time, 10 ms each: far beyond a minute.
      expect(sut.drainMs(routes('a2'))).toBe(60_000);
    });

    it("grows with the lane's backlog and how long its webhook holds a slot", async () => {
      const { sut, claims, started } = lanes({ perWebhook: 2, waitingPerWebhook: 1000 });
      sut.add(many('a', 102));
      await claims[0].answer();
      jest.advanceTimersByTime(500);
      started.get('a1')!();
      started.get('a2')!();
      // 100 waiting, 2 at a time, half a second each: about 25 s.
      expect(sut.drainMs(routes('a103'))).toBeCloseTo(25_000, -3);
      // Another webhook's lane is empty: the floor.
      expect(sut.drainMs(routes('b1'))).toBe(1000);
    });
  });
});
