import Redis from 'ioredis';
import type { Env } from '../src/config/load-config';
import { randomBytes } from 'node:crypto';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { QUEUES } from '../src/queue/queue.constants';
import { keyGroup } from '../src/redis/redis-keys';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import {
  CLUSTER_ENV,
  CLUSTER_PORTS,
  SENTINEL_ENV,
  startRedisTopologies,
} from './support/redis-topologies';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

/** Platform events of one burst; the failover tests kill a master after the first half. */
const BURST = 120;
/** Events in flight at once. */
const PARALLEL = 10;
/** A loaded machine delivers a burst slowly, and a failover takes seconds: generous, never a bound. */
const DELIVERED_WITHIN_MS = 180_000;

/**
 * Short sweeps: what the promoted replica never received (replication is asynchronous) is
 * queued again from PostgreSQL, the record, within seconds rather than the default minute.
 */
const SWEEPS = {
  INBOUND_SWEEP_INTERVAL_MS: '500',
  INBOUND_SWEEP_GRACE_MS: '2000',
  DELIVERY_SWEEP_INTERVAL_MS: '500',
};

/** Sends `uuids` as meeting.started events, PARALLEL at a time; each one's status. */
async function sendAll(t: TestApp, uuids: string[]): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  let next = 0;
  const lane = async () => {
    while (next < uuids.length) {
      const uuid = uuids[next++];
      const res = await sendZoomEvent(t.baseUrl, meetingStarted(uuid)).catch(() => null);
      statuses.set(uuid, res?.status ?? 0);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return statuses;
}

const freshUuids = (tag: string) =>
  Array.from({ length: BURST }, (_, i) => `${tag}-${i}-${randomBytes(6).toString('hex')}`);

/** The meeting uuids the receiver got notifications for. */
const deliveredUuids = (receiver: Receiver, path: string): Set<string> =>
  new Set(
    receiver
      .requests(path)
      .map((r) => (JSON.parse(r.body.toString('utf8')) as { data: { uuid: string } }).data.uuid),
  );

/** Waits until every uuid answered 200 arrived at `path`; returns those that never did. */
async function waitDelivered(receiver: Receiver, path: string, answered: string[]) {
  await waitFor(
    () => {
      const got = deliveredUuids(receiver, path);
      return answered.every((u) => got.has(u));
    },
    { timeoutMs: DELIVERED_WITHIN_MS, intervalMs: 250, what: 'every event answered 200 delivered' },
  ).catch(() => undefined);
  const got = deliveredUuids(receiver, path);
  return answered.filter((u) => !got.has(u));
}

const answered200 = (statuses: Map<string, number>) =>
  [...statuses].filter(([, status]) => status === 200).map(([uuid]) => uuid);

beforeAll(() => startRedisTopologies(), 60_000);
// A master a test killed comes back, a replica of the new one, for the next run.
afterAll(() => startRedisTopologies(), 60_000);

/** The app on `env` (with the short sweeps) and a receiver, for the describe it is called in. */
function appOn(env: Env): { t: TestApp; receiver: Receiver } {
  const on = {} as { t: TestApp; receiver: Receiver };
  beforeAll(async () => {
    on.receiver = await startReceiver();
    on.t = await startTestApp({ env: { ...env, ...SWEEPS } });
  });
  afterAll(async () => {
    try {
      // The killed server back and the topology whole again first: an app (and the keys'
      // clean-up) closing while a Cluster still settles after a failover can find none of its
      // startup nodes, or be left connecting.
      await startRedisTopologies();
      await on.t?.close();
    } finally {
      await on.receiver?.close();
    }
  }, 120_000);
  return on;
}

/** A one-off connection to one server, failing at once rather than retrying when it is down. */
async function onServer<T>(port: number, ask: (server: Redis) => Promise<T>): Promise<T> {
  const server = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
  });
  try {
    await server.connect();
    return await ask(server);
  } finally {
    server.disconnect();
  }
}

/** Kills the server on `port` with SIGKILL: no goodbye to its replica, as a lost machine. */
async function killServer(port: number): Promise<void> {
  const info = await onServer(port, (server) => server.info('server'));
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  expect(pid).toBeGreaterThan(0);
  process.kill(pid, 'SIGKILL');
}

/**
 * A burst with a master killed after its first half: events are answered 200 or 503 meanwhile,
 * /health/ready 503 while the master is gone and 200 after, and every event answered 200 is
 * delivered. `killMaster` kills the master and returns a probe saying when a replica serves
 * in its place (docs/operations.md#redis).
 */
async function burstThroughFailover(
  { t, receiver }: { t: TestApp; receiver: Receiver },
  tag: string,
  killMaster: () => Promise<{ promoted: () => Promise<boolean>; what: string }>,
): Promise<void> {
  const route = receiver.route({});
  await createWebhook(t, { url: route.url, events: ['job.started'] });
  const uuids = freshUuids(tag);
  const half = uuids.length / 2;
  const first = await sendAll(t, uuids.slice(0, half));
  const failover = await killMaster();
  // Readiness through the failover, sampled until a replica serves in the master's place.
  const readiness: number[] = [];
  let promoted = false;
  const sampling = (async () => {
    while (!promoted) {
      readiness.push((await request(t.baseUrl, 'GET', '/health/ready')).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const second = await sendAll(t, uuids.slice(half));

  const statuses = new Map([...first, ...second]);
  const others = [...statuses.values()].filter((s) => s !== 200 && s !== 503);
  expect(others).toEqual([]);
  const answered = answered200(statuses);
  expect(answered.length).toBeGreaterThan(half - 1);

  await waitFor(failover.promoted, { timeoutMs: 60_000, what: failover.what });
  promoted = true;
  await sampling;
  // 503 while the master was gone (a second at least: the Sentinels' down-after time, the
  // Cluster's node timeout).
  expect(readiness).toContain(503);
  expect(readiness.filter((s) => s !== 200 && s !== 503)).toEqual([]);
  expect(await waitDelivered(receiver, route.path, answered)).toEqual([]);
  await waitFor(async () => (await request(t.baseUrl, 'GET', '/health/ready')).status === 200, {
    timeoutMs: 60_000,
    what: '/health/ready 200 on the new master',
  });
}

describe('Redis through Sentinel: the master killed mid-burst (docs/operations.md#redis)', () => {
  const on = appOn(SENTINEL_ENV);
  let sentinel: Redis;

  beforeAll(() => {
    sentinel = new Redis({ host: '127.0.0.1', port: 26380 });
  });
  afterAll(() => sentinel?.disconnect());

  const masterPort = async () => {
    const [, port] = (await sentinel.call(
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      SENTINEL_ENV.REDIS_SENTINEL_NAME,
    )) as [string, string];
    return Number(port);
  };

  it(
    'goes on without a restart: every event answered 200 is delivered, the others 503',
    () =>
      burstThroughFailover(on, 'sentinel', async () => {
        const killed = await masterPort();
        await killServer(killed);
        return {
          promoted: async () => (await masterPort()) !== killed,
          what: 'the Sentinels to promote the replica',
        };
      }),
    DELIVERED_WITHIN_MS + 120_000,
  );
});

/** The `[start, end, [host, port, id], ...replicas]` of CLUSTER SLOTS. */
type SlotRange = [number, number, [string, number, string], ...unknown[]];

/**
 * The port of the master serving `slot` and whether the Cluster is ok, as the first node
 * answering (other than `except`) sees them.
 */
async function slotServer(slot: number, except?: number): Promise<{ port: number; ok: boolean }> {
  let last: unknown = new Error('no Cluster node answers');
  for (const port of CLUSTER_PORTS.filter((p) => p !== except)) {
    try {
      return await onServer(port, async (node) => {
        const ranges = (await node.call('CLUSTER', 'SLOTS')) as SlotRange[];
        const range = ranges.find(([start, end]) => start <= slot && slot <= end);
        if (range === undefined) throw new Error(`slot ${slot} is not served`);
        const info = await node.cluster('INFO');
        return { port: Number(range[2][1]), ok: info.includes('cluster_state:ok') };
      });
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

describe('Redis as a Cluster of three masters (docs/operations.md#redis-keys)', () => {
  const on = appOn(CLUSTER_ENV);

  it(
    'delivers a burst, with no CROSSSLOT anywhere',
    async () => {
      const { t, receiver } = on;
      const route = receiver.route({});
      await createWebhook(t, { url: route.url, events: ['job.started'] });
      const uuids = freshUuids('cluster');
      const statuses = await sendAll(t, uuids);
      expect([...statuses.values()].filter((s) => s !== 200)).toEqual([]);
      expect(await waitDelivered(receiver, route.path, uuids)).toEqual([]);
      expect((await request(t.baseUrl, 'GET', '/health/ready')).status).toBe(200);
      expect(t.logs.filter((line) => line.includes('CROSSSLOT'))).toEqual([]);
    },
    DELIVERED_WITHIN_MS + 60_000,
  );

  it("puts the default prefix's two busy queues on different nodes of a three-master Cluster", async () => {
    const [deliveries, inbound] = await Promise.all(
      [QUEUES.deliveries, QUEUES.inbound].map((group) =>
        onServer(CLUSTER_PORTS[0], async (node) =>
          Number(await node.call('CLUSTER', 'KEYSLOT', `${keyGroup('meb', group)}:x`)),
        ),
      ),
    );
    // Slots as `redis-cli --cluster create` splits them over three masters.
    const nodeOf = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
    expect(nodeOf(deliveries)).not.toBe(nodeOf(inbound));
  });
});

describe('Redis as a Cluster: the master of the inbound queue killed mid-burst (docs/operations.md#redis)', () => {
  const on = appOn(CLUSTER_ENV);

  it(
    'goes on without a restart: every event answered 200 is delivered, the others 503',
    () =>
      burstThroughFailover(on, 'cluster-failover', async () => {
        // The master of the inbound queue's slot (every event's first write), under this
        // app's own prefix.
        const key = `${keyGroup(on.t.config.redis.prefix, QUEUES.inbound)}:x`;
        const slot = Number(
          await onServer(CLUSTER_PORTS[0], (node) => node.call('CLUSTER', 'KEYSLOT', key)),
        );
        const killed = (await slotServer(slot)).port;
        await killServer(killed);
        return {
          promoted: async () => {
            const now = await slotServer(slot, killed);
            return now.ok && now.port !== killed;
          },
          what: "the Cluster to promote the killed master's replica",
        };
      }),
    DELIVERED_WITHIN_MS + 120_000,
  );
});
