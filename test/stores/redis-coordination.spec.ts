import { randomBytes, randomUUID } from 'node:crypto';
import Bull, { type Queue } from 'bull';
import { Cluster } from 'ioredis';
import { deleteQueueKeys } from '../../scripts/queue-keys';
import { RenewalLock } from '../../src/accounts/renewal-lock';
import type { AppConfig } from '../../src/config/config.types';
import { loadConfig } from '../../src/config/load-config';
import { InboundJobData, recordingJob } from '../../src/inbound/inbound-job';
import { ReconcileRedis } from '../../src/inbound/sources/reconciliation/reconcile-redis';
import { SocketLease } from '../../src/inbound/sources/websocket/socket-lease';
import { ensureJobs } from '../../src/queue/ensure-job';
import { QUEUES, queueOptions } from '../../src/queue/queue.constants';
import { RedisConnection, closeRedis, createRedis } from '../../src/redis/redis-connection';
import { keyPatterns } from '../../src/redis/redis-keys';
import {
  CLUSTER_ENV,
  SENTINEL_ENV,
  redisConfigOf,
  startRedisTopologies,
} from '../support/redis-topologies';
import { TEST_REDIS_URL } from '../support/test-app';
import { waitFor } from '../support/wait-for';

beforeAll(() => startRedisTopologies(), 60_000);

/** The keys of `prefix` (both of keyPatterns' forms), on every master of a Cluster. */
async function keysOf(client: RedisConnection, prefix: string): Promise<string[]> {
  const servers = client instanceof Cluster ? client.nodes('master') : [client];
  const keys: string[] = [];
  for (const server of servers) {
    for (const pattern of keyPatterns(prefix)) {
      let cursor = '0';
      do {
        const [next, found] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        keys.push(...found);
      } while (cursor !== '0');
    }
  }
  return keys;
}

/**
 * The service's Redis coordination besides the slots (webhook-slots.spec.ts): reconciliation's
 * request budget, pause and run lease (one script over two keys), the account renewal lock and
 * the platform socket's lease, each on one server, through Sentinel and on a Cluster, where a
 * script whose keys left their hash tag would fail with CROSSSLOT.
 */
describe.each([
  ['one server', { REDIS_URL: TEST_REDIS_URL }],
  ['Sentinel', SENTINEL_ENV],
  ['Cluster', CLUSTER_ENV],
] as const)('Redis coordination on %s', (_name, env) => {
  let redis: AppConfig['redis'];
  let client: RedisConnection;
  let config: AppConfig;

  beforeEach(() => {
    redis = { ...redisConfigOf(env), prefix: `mebtest:coord${randomBytes(4).toString('hex')}` };
    config = { redis } as AppConfig;
    client = createRedis(redis);
  });
  afterEach(async () => {
    await closeRedis(client);
    await deleteQueueKeys(redis, redis.prefix);
  });

  it("takes reconciliation's budget up to its rate, holds everyone in a pause, and leases one run", async () => {
    const a = new ReconcileRedis(config, { client } as unknown as Queue);
    const b = new ReconcileRedis(config, { client } as unknown as Queue);
    expect(await a.take(2)).toBe(0);
    expect(await b.take(2)).toBe(0);
    expect(await a.take(2)).toBeGreaterThan(0);
    await a.pause(60_000);
    expect(await b.take(1000)).toBeGreaterThan(1000);
    expect(await a.hold(10_000)).toBe(true);
    expect(await b.hold(10_000)).toBe(false);
    await a.release();
    expect(await b.hold(10_000)).toBe(true);
  });

  it('lets one holder per account take the renewal lock, freed on release', async () => {
    const a = new RenewalLock(client, redis.prefix, 10_000);
    const b = new RenewalLock(client, redis.prefix, 10_000);
    const taken = await Promise.all([a.tryTake('acct-1'), b.tryTake('acct-1')]);
    expect(taken.filter((l) => l !== null)).toHaveLength(1);
    await taken.find((l) => l !== null)?.release();
    expect(await a.held('acct-1')).toBe(false);
  });

  it("gives the platform socket's lease to one process, then to another once given back", async () => {
    const one = new SocketLease(config);
    const two = new SocketLease(config);
    try {
      // Its connection has no offline queue: a take before it is up fails, and is tried again.
      await waitFor(() => one.take(), { what: 'the first process to take the lease' });
      await waitFor(async () => (await two.take()) === false, { what: 'the second refused' });
      expect(await one.renew()).toBe(true);
      expect(await one.currentHolder()).toBe(one.holder);
      await one.release();
      await waitFor(() => two.take(), { what: 'the second process to take the lease' });
    } finally {
      await one.onModuleDestroy();
      await two.onModuleDestroy();
    }
  });

  it("keeps the recordings queue's jobs under its hash tag, where a sweep finds them and the prefix's deletion reaches them", async () => {
    // The queue as the app makes it (queueOptions, a createRedis connection per Bull client).
    const made: RedisConnection[] = [];
    const recordings = new Bull<InboundJobData>(QUEUES.recordings, {
      ...queueOptions({ ...loadConfig(env), redis }, QUEUES.recordings),
      createClient: (type) => {
        const connection =
          type === 'client'
            ? createRedis(redis)
            : createRedis(redis, { maxRetriesPerRequest: null, enableReadyCheck: false });
        made.push(connection);
        return connection;
      },
    });
    const id = randomUUID();
    try {
      expect(await ensureJobs(recordings, [recordingJob(id)])).toEqual({
        queued: [id],
        notRemoved: [],
      });
      // The next sweep finds the job where the first left it: nothing queued twice.
      expect(await ensureJobs(recordings, [recordingJob(id)])).toEqual({
        queued: [],
        notRemoved: [],
      });
      expect(await keysOf(client, redis.prefix)).toContain(
        `{${redis.prefix}:recordings}:recordings:${id}`,
      );
    } finally {
      await recordings.close();
      for (const connection of made) connection.disconnect();
    }
    await deleteQueueKeys(redis, redis.prefix);
    expect(await keysOf(client, redis.prefix)).toEqual([]);
  });
});
