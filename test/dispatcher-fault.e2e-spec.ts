import { createHmac, randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, spawnTestMs, startWorker } from './support/spawn-app';
import {
  CLIENTS,
  TEST_REDIS_URL,
  TestApp,
  ZOOM_SECRET_TOKEN,
  deleteRedisKeys,
  startTestApp,
} from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitForDeliveriesSucceeded } from './support/deliveries';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { TestWebhook, createWebhook } from './support/webhooks';

const EVENTS = 40;
/** Platform events POSTed in the burst test, in three parts. */
const BURST = 150;
const WEBHOOKS = 2;
/** The worker's DELIVERY_CONCURRENCY: attempts it has in flight at once. */
const CONCURRENCY = 4;

async function redisKeyCount(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    const [plain, grouped] = await Promise.all([
      redis.keys(`${prefix}:*`),
      redis.keys(`{${prefix}:*`),
    ]);
    return plain.length + grouped.length;
  } finally {
    redis.disconnect();
  }
}

describe('no loss when the worker is killed and Redis loses its data', () => {
  const prefix = `mebtest:fault${randomBytes(4).toString('hex')}`;
  let t: TestApp;
  let receiver: Receiver;
  const workers: SpawnedApp[] = [];

  /** A worker process, or (`all`) one that also serves the API, over this test's data. */
  const startProcess = (role: 'worker' | 'all' = 'worker') =>
    startWorker(t, {
      env: {
        APP_ROLE: role,
        ...(role === 'all'
          ? {
              AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
              ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
            }
          : {}),
        DELIVERY_CONCURRENCY: String(CONCURRENCY),
        DELIVERY_BACKOFF_MS: '50',
      },
      workers,
    });

  /** One job.started webhook (every earlier one deactivated) and BURST fresh meeting uuids. */
  const burstTarget = async (tag: string) => {
    await t.app.get(DataSource).query(`UPDATE webhooks SET active = false`);
    const route = receiver.route({ delaysMs: [20] });
    await createWebhook(t, { url: route.url, events: ['job.started'] });
    const uuids = Array.from(
      { length: BURST },
      (_, i) => `${tag}-${i}-${randomBytes(6).toString('hex')}`,
    );
    return { route, uuids };
  };
  /** The delivery ids each meeting uuid arrived under at `path`. */
  const deliveryIdsByUuid = (path: string) => {
    const ids = new Map<string, Set<string>>();
    for (const req of receiver.requests(path)) {
      const { uuid } = (JSON.parse(req.body.toString('utf8')) as { data: { uuid: string } }).data;
      ids.set(uuid, (ids.get(uuid) ?? new Set()).add(String(req.headers['x-service-delivery'])));
    }
    return ids;
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { APP_ROLE: 'api' }, queuePrefix: prefix });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await receiver.close();
    await t.close();
    await deleteRedisKeys(prefix);
  });

  it(
    'delivers every delivery after SIGKILL of the worker, a Redis wipe and a restart',
    async () => {
      const webhooks: (TestWebhook & { path: string })[] = [];
      for (let i = 0; i < WEBHOOKS; i++) {
        const route = receiver.route({ delaysMs: [150] });
        webhooks.push({ ...(await createWebhook(t, { url: route.url })), path: route.path });
      }
      const deliveryIds: string[] = [];
      const dispatcher = t.app.get(DispatcherService);
      for (let i = 0; i < EVENTS; i++) {
        deliveryIds.push(
          ...(await dispatcher.publish({ kind: 'job.started', data: { n: i } })).deliveryIds,
        );
      }
      const sent = deliveryIds.length;
      expect(sent).toBe(EVENTS * WEBHOOKS);

      const succeeded = async () =>
        (
          await queryDatabase<{ id: string }>(
            t.database.url,
            `SELECT id FROM deliveries WHERE status = 'succeeded'`,
          )
        ).map((r) => r.id);

      const first = await startProcess();
      await waitFor(async () => (await succeeded()).length >= sent / 4, {
        timeoutMs: 30000,
        what: 'a quarter of the deliveries to succeed',
      });
      // The receiver stops answering, so the worker's slots fill with attempts it has sent and
      // not yet recorded: those are in flight when it dies.
      for (const webhook of webhooks) receiver.hold(webhook.path);
      await waitFor(() => receiver.heldRequests().length >= CONCURRENCY, {
        what: `${CONCURRENCY} deliveries to be in flight`,
      });
      first.child.kill('SIGKILL');
      await first.exit;
      const inFlight = new Set(
        receiver.heldRequests().map((r) => String(r.headers['x-service-delivery'])),
      );
      const doneBeforeKill = new Set(await succeeded());
      expect(inFlight.size).toBeGreaterThanOrEqual(CONCURRENCY);
      // Received, and never recorded succeeded: the worker died between the two.
      expect([...inFlight].filter((id) => doneBeforeKill.has(id))).toEqual([]);
      // Answered now, to sockets that died with the worker: nothing is recorded from them.
      for (const webhook of webhooks) receiver.release(webhook.path);
      const receivedAtKill = receiver.received.length;

      // Only this run's keys: other test files share this Redis (and run in parallel), so
      // FLUSHALL would wipe their queues too. For this run's queues it is the same loss.
      expect(await redisKeyCount(prefix)).toBeGreaterThan(0);
      await deleteRedisKeys(prefix);
      expect(await redisKeyCount(prefix)).toBe(0);

      const second = await startProcess();
      const restartedAt = Date.now();
      // A failure says which deliveries were still pending, and why (attempts, due, lease).
      await waitForDeliveriesSucceeded(t.database.url, deliveryIds, {
        timeoutMs: 60000,
        what: 'every delivery to succeed',
      });
      const drainedMs = Date.now() - restartedAt;

      const byDelivery = new Map<string, number>();
      for (const req of receiver.received) {
        const id = String(req.headers['x-service-delivery']);
        byDelivery.set(id, (byDelivery.get(id) ?? 0) + 1);
        const webhook = webhooks.find((w) => w.path === req.path);
        expect(req.headers['x-service-signature']).toBe(
          createHmac('sha256', webhook!.secret).update(req.body).digest('hex'),
        );
      }
      const received = receiver.received.length;
      const distinctAtKill = new Set(
        receiver.received
          .slice(0, receivedAtKill)
          .map((r) => String(r.headers['x-service-delivery'])),
      ).size;
      const duplicates = received - byDelivery.size;
      console.log(
        `fault test: sent ${sent}, received ${received} (${byDelivery.size} distinct, ` +
          `${duplicates} duplicates); ${doneBeforeKill.size} succeeded before SIGKILL, ` +
          `${inFlight.size} in flight at SIGKILL, ${receivedAtKill} requests received by then; ` +
          `${sent - distinctAtKill} never sent before the Redis wipe; all succeeded ` +
          `${(drainedMs / 1000).toFixed(1)} s after the restarted worker was ready`,
      );
      expect([...byDelivery.keys()].sort()).toEqual([...deliveryIds].sort());
      // Succeeded before the kill: never sent again, although Redis forgot them.
      for (const id of doneBeforeKill) expect(byDelivery.get(id)).toBe(1);
      // In flight at the kill: sent again after the restart, under the same delivery id.
      for (const id of inFlight) expect(byDelivery.get(id)).toBeGreaterThanOrEqual(2);
      expect(second.output()).toMatch(/re-queued \d+ due deliveries/);

      // And the restarted worker drains and exits 0 on SIGTERM.
      second.child.kill('SIGTERM');
      expect(await second.exit).toEqual({ code: 0, signal: null });
    },
    spawnTestMs(2),
  );

  it(
    'delivers every event of a burst POSTed across a worker SIGKILL and a Redis wipe',
    async () => {
      const { route, uuids } = await burstTarget('burst');
      const answers: number[] = [];
      /** POSTs `list` to /zoom/events, ten at a time, as the platform would. */
      const post = async (list: string[]) => {
        for (let i = 0; i < list.length; i += 10) {
          const sent = await Promise.all(
            list.slice(i, i + 10).map((uuid) => sendZoomEvent(t.baseUrl, meetingStarted(uuid))),
          );
          answers.push(...sent.map((r) => r.status));
        }
      };
      const arrived = () => deliveryIdsByUuid(route.path);

      const first = await startProcess();
      const third = BURST / 3;
      await post(uuids.slice(0, third));
      await waitFor(() => arrived().size >= third / 2, { what: 'part of the burst delivered' });
      // Killed while the second third is being accepted, then Redis forgets every job.
      const middle = post(uuids.slice(third, 2 * third));
      first.child.kill('SIGKILL');
      await first.exit;
      await middle;
      await deleteRedisKeys(prefix);
      // Accepted while no worker runs.
      await post(uuids.slice(2 * third));
      expect(answers.filter((s) => s !== 200)).toEqual([]);

      const second = await startProcess();
      await waitFor(() => arrived().size === BURST, {
        timeoutMs: 90000,
        what: `all ${BURST} events delivered`,
      });
      // One delivery per event: a notification sent twice (in flight at the kill) carries the
      // same delivery id both times.
      const ids = deliveryIdsByUuid(route.path);
      expect([...ids.values()].filter((set) => set.size !== 1)).toEqual([]);
      expect([...ids.keys()].sort()).toEqual([...uuids].sort());
      second.child.kill('SIGTERM');
      expect(await second.exit).toEqual({ code: 0, signal: null });
    },
    spawnTestMs(2),
  );

  it(
    'delivers every event a process of role all accepted, across its SIGKILL and a Redis wipe',
    async () => {
      // Role all sends what it stores itself, with no job: what it held when killed is only in
      // PostgreSQL, pending, and the next process's sweeper must find it.
      const { route, uuids } = await burstTarget('all');
      const accepted = new Set<string>();
      /** POSTs ten at a time; an answer lost with the process counts as not accepted. */
      const post = async (url: string, list: string[]) => {
        for (let i = 0; i < list.length; i += 10) {
          await Promise.all(
            list.slice(i, i + 10).map(async (uuid) => {
              const res = await sendZoomEvent(url, meetingStarted(uuid)).catch(() => null);
              if (res?.status === 200) accepted.add(uuid);
            }),
          );
        }
      };
      const arrived = () => deliveryIdsByUuid(route.path);

      const first = await startProcess('all');
      const third = BURST / 3;
      await post(first.url, uuids.slice(0, third));
      await waitFor(() => arrived().size >= third / 2, { what: 'part of the burst delivered' });
      const middle = post(first.url, uuids.slice(third, 2 * third));
      first.child.kill('SIGKILL');
      await first.exit;
      await middle;
      await deleteRedisKeys(prefix);
      const acceptedByFirst = accepted.size;
      expect(acceptedByFirst).toBeGreaterThanOrEqual(third);

      // The platform retries what got no 200, with the rest of the burst.
      const second = await startProcess('all');
      await post(
        second.url,
        uuids.filter((uuid) => !accepted.has(uuid)),
      );
      expect(accepted.size).toBe(BURST);
      // Sent by the first process and never recorded (in flight at the kill): sent again, under
      // the same delivery id, once the second process's sweeper finds it pending.
      const unsettled = async () =>
        (
          await queryDatabase<{ id: string }>(
            t.database.url,
            `SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
           WHERE w.active AND d.status <> 'succeeded'`,
          )
        ).length;
      await waitFor(async () => arrived().size === BURST && (await unsettled()) === 0, {
        timeoutMs: 90000,
        what: `all ${BURST} events delivered and recorded`,
      });
      const ids = deliveryIdsByUuid(route.path);
      expect([...ids.values()].filter((set) => set.size !== 1)).toEqual([]);
      second.child.kill('SIGTERM');
      expect(await second.exit).toEqual({ code: 0, signal: null });
    },
    spawnTestMs(2),
  );

  it(
    'finishes and records the attempt in flight when the worker gets SIGTERM',
    async () => {
      const route = receiver.route({ delaysMs: [1500] });
      await t.app.get(DataSource).query(`UPDATE webhooks SET active = false`);
      await createWebhook(t, { url: route.url });
      const worker = await startProcess();
      const { deliveryIds } = await t.app
        .get(DispatcherService)
        .publish({ kind: 'job.started', data: {} });
      await waitFor(() => receiver.requests(route.path).length === 1);
      worker.child.kill('SIGTERM');
      expect(await worker.exit).toEqual({ code: 0, signal: null });
      const [row] = await queryDatabase<{ status: string; attempt_count: number }>(
        t.database.url,
        `SELECT status, attempt_count FROM deliveries WHERE id = $1`,
        [deliveryIds[0]],
      );
      expect(row).toEqual({ status: 'succeeded', attempt_count: 1 });
    },
    spawnTestMs(1),
  );
});
