import { randomBytes, randomUUID } from 'node:crypto';
import type { Queue } from 'bull';
import type { AppConfig } from '../../src/config/config.types';
import { createRedis } from '../../src/redis/redis-connection';
import {
  RedisWebhookSlots,
  SlotRequest,
  WebhookSlots,
  slotLeaseMs,
} from '../../src/dispatcher/engine/webhook-slots';
import { MemoryWebhookSlots } from '../fakes/memory-slots';
import { deleteQueueKeys } from '../../scripts/queue-keys';
import { TEST_REDIS_URL } from '../support/test-app';
import { CLUSTER_ENV, redisConfigOf, startRedisTopologies } from '../support/redis-topologies';
import { waitFor } from '../support/wait-for';

const TIMEOUT_MS = 10_000;
const LEASE_MS = slotLeaseMs({ delivery: { timeoutMs: TIMEOUT_MS } } as AppConfig);

/** Worker processes sharing one set of slots: each view has a holder id of its own. */
interface SlotsBackend {
  process(): WebhookSlots;
  close(): Promise<void>;
}

/**
 * The Lua script in Redis (one server, or the Cluster of test/support/redis-topologies.sh),
 * each process on a connection of its own, under a fresh prefix.
 */
const redisBackend = (redis: AppConfig['redis']) => (): SlotsBackend => {
  const prefix = `mebtest:slots${randomBytes(4).toString('hex')}`;
  const config = {
    redis: { ...redis, prefix },
    delivery: { timeoutMs: TIMEOUT_MS },
  } as AppConfig;
  const made: { client: ReturnType<typeof createRedis>; slots: RedisWebhookSlots }[] = [];
  return {
    process() {
      const client = createRedis(redis);
      const slots = new RedisWebhookSlots(config, { client } as unknown as Queue);
      made.push({ client, slots });
      return slots;
    },
    async close() {
      for (const { client, slots } of made) {
        await slots.onModuleDestroy();
        client.disconnect();
      }
      await deleteQueueKeys(redis, prefix);
    },
  };
};

function memoryBackend(): SlotsBackend {
  const slots = new MemoryWebhookSlots(LEASE_MS);
  return { process: () => slots.forProcess(), close: () => Promise.resolve() };
}

const ask = (
  webhookId: string,
  want: number,
  maxInFlight: number,
  rateLimit: number | null = null,
): SlotRequest => ({
  webhookId,
  want,
  maxInFlight,
  rateLimit,
});

/**
 * The webhook slots (docs/architecture.md, "The delivery scheduler"): the Redis script of
 * webhook-slots.ts and test/fakes/memory-slots.ts, which the scheduler's unit specs run on,
 * held to the same cases so that the fake cannot drift from the script.
 */
beforeAll(() => startRedisTopologies(), 60_000);

describe.each([
  ['redis', redisBackend(redisConfigOf({ REDIS_URL: TEST_REDIS_URL }))],
  ['redis cluster', redisBackend(redisConfigOf(CLUSTER_ENV))],
  ['memory', memoryBackend],
] as const)('WebhookSlots (%s)', (_name, make) => {
  let backend: SlotsBackend;
  beforeEach(() => {
    backend = make();
  });
  afterEach(() => backend.close());

  it('grants up to max_in_flight, then none, saying when the first held slot lapses', async () => {
    const slots = backend.process();
    const webhook = randomUUID();
    const first = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(webhook, 2, 3)],
    });
    expect(first.grants[0]).toMatchObject({ retryInMs: null, rateBound: false });
    expect(first.grants[0].tokens).toHaveLength(2);
    const second = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(webhook, 2, 3)],
    });
    expect(second.grants[0].tokens).toHaveLength(1);
    expect(second.grants[0].rateBound).toBe(false);
    expect(second.grants[0].retryInMs).toBeGreaterThan(0);
    expect(second.grants[0].retryInMs).toBeLessThanOrEqual(LEASE_MS);
    expect(second.contended).toEqual([]);
  });

  it('serves many webhooks in one round (on a Cluster: one script, one node)', async () => {
    const slots = backend.process();
    const webhooks = Array.from({ length: 20 }, () => randomUUID());
    const first = await slots.exchange({
      released: [],
      renewed: [],
      requests: webhooks.map((w) => ask(w, 1, 1, 5)),
    });
    expect(first.grants.map((g) => g.tokens.length)).toEqual(webhooks.map(() => 1));
    const second = await slots.exchange({
      released: webhooks.map((w, i) => ({ webhookId: w, token: first.grants[i].tokens[0] })),
      renewed: [],
      requests: webhooks.map((w) => ask(w, 1, 1, 5)),
    });
    expect(second.grants.map((g) => g.tokens.length)).toEqual(webhooks.map(() => 1));
  });

  it('grants what it can of more than max_in_flight, with nothing held to wait for', async () => {
    const slots = backend.process();
    const answer = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(randomUUID(), 3, 2)],
    });
    expect(answer.grants[0].tokens).toHaveLength(2);
    expect(answer.grants[0].retryInMs).toBeNull();
  });

  it('takes a slot given back in the same round, for the same process', async () => {
    const slots = backend.process();
    const webhook = randomUUID();
    const { grants } = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(webhook, 1, 1)],
    });
    const again = await slots.exchange({
      released: [{ webhookId: webhook, token: grants[0].tokens[0] }],
      renewed: [],
      requests: [ask(webhook, 1, 1)],
    });
    expect(again.grants[0].tokens).toHaveLength(1);
  });

  it('reserves a slot given back for the process that waits for it, and tells it', async () => {
    const [one, two] = [backend.process(), backend.process()];
    const freed: string[] = [];
    two.onFreed((webhookId) => freed.push(webhookId));
    const webhook = randomUUID();
    const held = await one.exchange({ released: [], renewed: [], requests: [ask(webhook, 1, 1)] });
    const waiting = await two.exchange({
      released: [],
      renewed: [],
      requests: [ask(webhook, 1, 1)],
    });
    expect(waiting.grants[0].tokens).toEqual([]);
    // The holder renews it: it learns that another process waits.
    const renewed = await one.exchange({
      released: [],
      renewed: [{ webhookId: webhook, token: held.grants[0].tokens[0] }],
      requests: [],
    });
    expect(renewed.contended).toEqual([webhook]);
    // Given back: not for the process that gave it back, but for the one that waits.
    const back = await one.exchange({
      released: [{ webhookId: webhook, token: held.grants[0].tokens[0] }],
      renewed: [],
      requests: [ask(webhook, 1, 1)],
    });
    expect(back.grants[0].tokens).toEqual([]);
    await waitFor(() => freed.includes(webhook), { what: 'the waiting process told' });
    const taken = await two.exchange({ released: [], renewed: [], requests: [ask(webhook, 1, 1)] });
    expect(taken.grants[0].tokens).toHaveLength(1);
  });

  it('starts at most rate_limit in a second, and says when the window allows more', async () => {
    const slots = backend.process();
    const answer = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(randomUUID(), 5, 10, 3)],
    });
    expect(answer.grants[0].tokens).toHaveLength(3);
    expect(answer.grants[0].rateBound).toBe(true);
    expect(answer.grants[0].retryInMs).toBeGreaterThan(0);
    expect(answer.grants[0].retryInMs).toBeLessThanOrEqual(1000);
  });

  it('counts only the starts made under a rate limit: one set later starts with an empty window', async () => {
    const slots = backend.process();
    const webhook = randomUUID();
    const before = await slots.exchange({
      released: [],
      renewed: [],
      requests: [ask(webhook, 3, 10)],
    });
    const released = before.grants[0].tokens.map((token) => ({ webhookId: webhook, token }));
    const limited = await slots.exchange({
      released,
      renewed: [],
      requests: [ask(webhook, 2, 10, 2)],
    });
    expect(limited.grants[0]).toMatchObject({ rateBound: false, retryInMs: null });
    expect(limited.grants[0].tokens).toHaveLength(2);
  });
});
