import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { QUEUES } from '../src/queue/queue.constants';
import { keyGroup } from '../src/redis/redis-keys';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLUSTER_ENV, SENTINEL_ENV, startRedisTopologies } from './support/redis-topologies';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

/** Platform events of one burst; the Sentinel test kills the master after the first half. */
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

describe('Redis through Sentinel: the master killed mid-burst (docs/operations.md#redis)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let sentinel: Redis;

  beforeAll(async () => {
    sentinel = new Redis({ host: '127.0.0.1', port: 26380 });
    receiver = await startReceiver();
    t = await startTestApp({ env: { ...SENTINEL_ENV, ...SWEEPS } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    sentinel?.disconnect();
  });

  it(
    'goes on without a restart: every event answered 200 is delivered, the others 503',
    async () => {
      const route = receiver.route({});
      await createWebhook(t, { url: route.url, events: ['job.started'] });
      const [host, port] = (await sentinel.call(
        'SENTINEL',
        'GET-MASTER-ADDR-BY-NAME',
        SENTINEL_ENV.REDIS_SENTINEL_NAME,
      )) as [string, string];
      const master = new Redis({ host, port: Number(port), lazyConnect: true });
      await master.connect();
      const info = await master.info('server');
      const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      master.disconnect();
      expect(pid).toBeGreaterThan(0);

      const uuids = freshUuids('sentinel');
      const half = uuids.length / 2;
      const first = await sendAll(t, uuids.slice(0, half));
      // SIGKILL: no goodbye to the replica or the Sentinels, as a lost machine.
      process.kill(pid, 'SIGKILL');
      // Readiness through the failover, sampled until the Sentinels have promoted the replica.
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

      // The Sentinels promoted the replica: another master than the one killed.
      await waitFor(
        async () => {
          const [, now] = (await sentinel.call(
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            SENTINEL_ENV.REDIS_SENTINEL_NAME,
          )) as [string, string];
          return now !== port;
        },
        { timeoutMs: 60_000, what: 'the Sentinels to promote the replica' },
      );
      promoted = true;
      await sampling;
      // 503 while the master was gone (a second at least: the Sentinels' down-after time).
      expect(readiness).toContain(503);
      expect(readiness.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect(await waitDelivered(receiver, route.path, answered)).toEqual([]);
      await waitFor(async () => (await request(t.baseUrl, 'GET', '/health/ready')).status === 200, {
        timeoutMs: 60_000,
        what: '/health/ready 200 on the new master',
      });
    },
    DELIVERED_WITHIN_MS + 120_000,
  );
});

describe('Redis as a Cluster of three masters (docs/operations.md#redis-keys)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ env: { ...CLUSTER_ENV, ...SWEEPS } });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it(
    'delivers a burst, with no CROSSSLOT anywhere',
    async () => {
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
    const node = new Redis({ host: '127.0.0.1', port: 17001 });
    try {
      const slotOf = async (group: string) =>
        Number(await node.call('CLUSTER', 'KEYSLOT', `${keyGroup('meb', group)}:x`));
      // Slots as `redis-cli --cluster create` splits them over three masters.
      const nodeOf = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
      const [deliveries, inbound] = await Promise.all(
        [QUEUES.deliveries, QUEUES.inbound].map(slotOf),
      );
      expect(nodeOf(deliveries)).not.toBe(nodeOf(inbound));
    } finally {
      node.disconnect();
    }
  });
});
