import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { Json, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, spawnTestMs, startWorker } from './support/spawn-app';
import { TEST_REDIS_URL, TestApp, deleteRedisKeys, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { keyGroup } from '../src/redis/redis-keys';

/** Most of the times (ms) within any `windowMs`. */
function peakWithin(times: number[], windowMs: number): number {
  const at = [...times].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, first = 0; i < at.length; i++) {
    while (at[i] - at[first] >= windowMs) first++;
    peak = Math.max(peak, i - first + 1);
  }
  return peak;
}

/**
 * Most requests a receiver had open at once, from their arrival times, for a route that
 * answers each after `answerMs`: a slot freed by an answer is reused no sooner than that after
 * the request that held it arrived, so more arrivals within `answerMs` than slots means more
 * were in flight.
 */
const peakInFlight = (requests: ReceivedRequest[], answerMs: number) =>
  peakWithin(
    requests.map((r) => r.receivedAt),
    answerMs,
  );

const succeededCount = async (t: TestApp, webhookId: string): Promise<number> => {
  const [row] = await queryDatabase<{ n: string }>(
    t.database.url,
    `SELECT count(*) AS n FROM deliveries WHERE webhook_id = $1 AND status = 'succeeded'`,
    [webhookId],
  );
  return Number(row.n);
};

describe('per-webhook max_in_flight and rate_limit (role all)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let token: string;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([startTestApp(), startReceiver()]);
    token = await t.token();
  });
  afterAll(() => Promise.all([receiver.close(), t.close()]));

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });
  const newWebhook = (fields: Record<string, unknown> = {}) =>
    api('POST', '/api/webhooks', {
      url: receiver.route().url,
      events: ['job.started'],
      secret: 'whsec-limits-0123456789',
      ...fields,
    });

  /** Publishes 12 job.started events and waits until the webhook's deliveries succeeded. */
  const publishAndDeliver = async (created: { body: Json }) => {
    const dispatcher = t.app.get(DispatcherService);
    await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        dispatcher.publish({ kind: 'job.started', data: { n } }),
      ),
    );
    await waitFor(async () => (await succeededCount(t, created.body.id)) === 12, {
      // A deadline for a loaded machine, not a speed: at 2 in flight they take 1.8 s alone.
      timeoutMs: 60_000,
      what: 'the 12 deliveries to succeed',
    });
  };

  it('shows the default max_in_flight and no rate limit on a webhook that set neither', async () => {
    const created = await newWebhook();
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ max_in_flight: 10, rate_limit: null });
    const listed = await api('GET', '/api/webhooks');
    expect(listed.body.data.find((w: Json) => w.id === created.body.id)).toMatchObject({
      max_in_flight: 10,
      rate_limit: null,
    });
  });

  it('takes both on create and PATCH, and shows them', async () => {
    const created = await newWebhook({ max_in_flight: 3, rate_limit: 250 });
    expect(created.body).toMatchObject({ max_in_flight: 3, rate_limit: 250 });
    const id = created.body.id as string;

    const patched = await api('PATCH', `/api/webhooks/${id}`, {
      max_in_flight: 100,
      rate_limit: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ max_in_flight: 100, rate_limit: null });
    expect((await api('GET', `/api/webhooks/${id}`)).body).toMatchObject({
      max_in_flight: 100,
      rate_limit: null,
    });
  });

  it.each([
    ['max_in_flight', 0],
    ['max_in_flight', 101],
    ['max_in_flight', 2.5],
    ['max_in_flight', '5'],
    ['max_in_flight', null],
    ['rate_limit', 0],
    ['rate_limit', 10001],
    ['rate_limit', 1.5],
    ['rate_limit', 'none'],
  ])('refuses %s %j with a 400 naming it, on create and on PATCH', async (field, value) => {
    const created = await newWebhook({ [field]: value });
    expect(created.status).toBe(400);
    expect(created.body.details).toEqual([
      expect.objectContaining({ field, message: expect.stringContaining(`${field} must be`) }),
    ]);

    const { body } = await newWebhook();
    const url = receiver.route().url;
    const patched = await api('PATCH', `/api/webhooks/${body.id}`, { url, [field]: value });
    expect(patched.status).toBe(400);
    expect(patched.body.details).toEqual([expect.objectContaining({ field })]);
    // Nothing half-written: the URL given beside the bad value is not stored either.
    expect((await api('GET', `/api/webhooks/${body.id}`)).body.url).toBe(body.url);
  });

  it('never has more than max_in_flight attempts open at the receiver', async () => {
    const answerMs = 300;
    const route = receiver.route({ delaysMs: [answerMs] }, 'narrow');
    await publishAndDeliver(await newWebhook({ url: route.url, max_in_flight: 2 }));
    expect(peakInFlight(receiver.requests(route.path), answerMs - 20)).toBe(2);
  }, 120_000);

  it('starts no more than rate_limit attempts in any second', async () => {
    const route = receiver.route({}, 'rated');
    const created = await newWebhook({ url: route.url, rate_limit: 4 });
    await publishAndDeliver(created);
    // The attempts' start times as the sender recorded them. They trail the slots' grants by
    // however long the event loop took to get to them, so a window a little under a second
    // allows for that; a limit not applied at all would start all 12 at once.
    const starts = await queryDatabase<{ at: Date }>(
      t.database.url,
      `SELECT a.started_at AS at FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
       WHERE d.webhook_id = $1`,
      [created.body.id],
    );
    expect(
      peakWithin(
        starts.map((s) => s.at.getTime()),
        700,
      ),
    ).toBeLessThanOrEqual(4);
  }, 120_000);
});

describe('the limit across worker processes', () => {
  const prefix = `mebtest:limits${randomBytes(4).toString('hex')}`;
  let t: TestApp;
  let receiver: Receiver;
  let redis: Redis;
  const workers: SpawnedApp[] = [];

  /** The holders (worker processes) of the webhook's slots now. */
  const slotHolders = async (webhookId: string): Promise<string[]> => {
    const tokens = await redis.zrange(`${keyGroup(prefix, 'slots')}:${webhookId}:slots`, 0, -1);
    // Reservations (r|…) for a waiting process aside: held slots are <holder>:<n>:<j>.
    return tokens.filter((token) => !token.startsWith('r|')).map((token) => token.split(':')[0]);
  };

  beforeAll(async () => {
    [t, receiver] = await Promise.all([
      startTestApp({ env: { APP_ROLE: 'api' }, queuePrefix: prefix }),
      startReceiver(),
    ]);
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    redis.disconnect();
    await receiver.close();
    await t.close();
    await deleteRedisKeys(prefix);
  });

  it(
    'holds max_in_flight across two workers, each of which could send more',
    async () => {
      const [a, b] = await Promise.all([startWorker(t, { workers }), startWorker(t, { workers })]);
      const answerMs = 200;
      const route = receiver.route({ delaysMs: [answerMs] }, 'shared');
      const webhook = await createWebhook(t, { url: route.url });
      await request(t.baseUrl, 'PATCH', `/api/webhooks/${webhook.id}`, {
        token: await t.token(),
        body: { max_in_flight: 3 },
      });
      const dispatcher = t.app.get(DispatcherService);
      // One at a time: separate jobs, which Bull spreads over both workers.
      for (let n = 0; n < 40; n++) await dispatcher.publish({ kind: 'job.started', data: { n } });

      const holders = new Set<string>();
      await waitFor(
        async () => {
          for (const holder of await slotHolders(webhook.id)) holders.add(holder);
          return (await succeededCount(t, webhook.id)) === 40;
        },
        { timeoutMs: 60000, intervalMs: 20, what: 'the 40 deliveries to succeed' },
      );
      expect(holders.size).toBe(2);
      expect(peakInFlight(receiver.requests(route.path), answerMs - 20)).toBeLessThanOrEqual(3);
      for (const worker of [a, b]) {
        worker.child.kill('SIGTERM');
        expect(await worker.exit).toEqual({ code: 0, signal: null });
      }
    },
    spawnTestMs(2),
  );

  it(
    'frees the slots of a worker killed while holding them within DELIVERY_TIMEOUT_MS + 30 s',
    async () => {
      // A short attempt deadline: slots lapse at DELIVERY_TIMEOUT_MS + 5 s.
      const env = { DELIVERY_TIMEOUT_MS: '1500' };
      const first = await startWorker(t, { env, workers });
      const route = receiver.route({}, 'killed');
      receiver.hold(route.path);
      const webhook = await createWebhook(t, { url: route.url });
      await request(t.baseUrl, 'PATCH', `/api/webhooks/${webhook.id}`, {
        token: await t.token(),
        body: { max_in_flight: 3 },
      });
      const dispatcher = t.app.get(DispatcherService);
      await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          dispatcher.publish({ kind: 'job.started', data: { n } }),
        ),
      );
      await waitFor(() => receiver.requests(route.path).length === 3, {
        what: 'the first worker to hold 3 requests open',
      });
      expect(await slotHolders(webhook.id)).toHaveLength(3);

      first.child.kill('SIGKILL');
      await first.exit;
      const killedAt = Date.now();
      receiver.release(route.path);
      await startWorker(t, { env, workers });

      // docs/api.md#receiver-health: free again within DELIVERY_TIMEOUT_MS + 30 s of the death, so sent by then.
      await waitFor(() => receiver.requests(route.path).length > 3, {
        timeoutMs: killedAt + 1500 + 30_000 - Date.now(),
        what: 'the second worker to send once the dead one’s slots lapsed',
      });
      await waitFor(async () => (await succeededCount(t, webhook.id)) === 10, {
        timeoutMs: 60000,
        what: 'every delivery to succeed',
      });
    },
    spawnTestMs(2),
  );
});
