import { meetingStarted, meetingUuid } from '../scripts/platform/zoom-events';
import { FakeZoom } from './support/fake-zoom';
import { FakeConnection, FakeZoomWs } from './support/fake-zoom-ws';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, SpawnedWorker, spawnTestMs, startWorker } from './support/spawn-app';
import { TcpProxy } from './support/tcp-proxy';
import { CLIENTS, TEST_REDIS_URL, TestApp, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

/** The promise of docs/inbound-sources.md: a dead holder is replaced within this. */
const TAKEOVER_MS = 30_000;

/**
 * One socket for the whole deployment (docs/inbound-sources.md#one-socket): worker processes
 * elect one holder through a Redis lease. The fake platform socket counts the sockets open at
 * once and the older ones a newer one pushed out; both must stay at one and none.
 */
describe('WebSocket source across processes (spawned workers, one socket)', () => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let receiver: Receiver;
  let t: TestApp;
  let started: { url: string; path: string };
  const workers: SpawnedApp[] = [];
  let env: Record<string, string>;

  const stateOf = async (worker: SpawnedWorker): Promise<string | null> => {
    try {
      const res = await request(worker.url, 'GET', '/health/ready');
      return (res.body?.websocket?.state as string | undefined) ?? null;
    } catch {
      return null;
    }
  };
  const holderAmong = (candidates: SpawnedWorker[], timeoutMs = TAKEOVER_MS) =>
    waitFor(
      async () => {
        const states = await Promise.all(candidates.map(stateOf));
        const holders = candidates.filter((_, i) => states[i] === 'connected');
        return holders.length === 1 && platform.current?.acknowledged === true && holders[0];
      },
      {
        timeoutMs,
        what: `one connected worker (open ${platform.openCount}, connections ${platform.connections.length})`,
      },
    );
  const acknowledgedAfter = (count: number, timeoutMs: number): Promise<FakeConnection> =>
    waitFor(
      () => {
        const c = platform.current;
        return c !== null && c.acknowledged && platform.connections.length > count && c;
      },
      { timeoutMs, what: `a new acknowledged socket (open ${platform.openCount})` },
    );
  const expectOneSocketAtATime = () => {
    expect({ maxOpen: platform.maxOpen, replaced: platform.replaced }).toEqual({
      maxOpen: 1,
      replaced: 0,
    });
  };

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    receiver = await startReceiver();
    // The workers know the API clients as the API process does: a webhook of a client a process
    // does not know gets nothing from it (docs/api.md#receiver-health).
    env = {
      ...zoom.env(),
      ...platform.env(1000),
      AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
      RECONCILE_INTERVAL_MS: '0',
    };
    t = await startTestApp({ env: { APP_ROLE: 'api', ...env } });
    started = receiver.route({}, 'started');
    await createWebhook(t, { url: started.url, events: ['job.started'] });
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exit));
    await t?.close();
    await platform?.close();
    await receiver?.close();
    await zoom?.close();
  });

  let running: SpawnedWorker[] = [];

  it(
    'two and then three processes hold one socket between them, and each event is stored once',
    async () => {
      // One after the other: each has its own start-up budget on a loaded machine.
      running = [await startWorker(t, { env, workers })];
      running.push(await startWorker(t, { env, workers }));
      const holder = await holderAmong(running);
      running.push(await startWorker(t, { env, workers }));
      expect(await holderAmong(running)).toBe(holder);
      const states = await Promise.all(running.map(stateOf));
      expect(states.sort()).toEqual(['connected', 'standby', 'standby']);
      const uuids = Array.from({ length: 10 }, () => meetingUuid());
      for (const uuid of uuids) platform.push(meetingStarted(uuid));
      // Stored once each, by the one holder, and delivered once each.
      const stored = await waitFor(
        async () => {
          const rows = await queryDatabase<{ identity_key: string; via: string }>(
            t.database.url,
            'SELECT identity_key, via FROM inbound_events',
          );
          return rows.length >= uuids.length && rows;
        },
        { timeoutMs: 60_000, what: 'the ten events stored' },
      );
      for (const uuid of uuids) {
        expect(stored.filter((r) => r.identity_key.includes(uuid))).toEqual([
          expect.objectContaining({ via: 'websocket' }),
        ]);
      }
      const deliveredOf = (uuid: string) =>
        receiver.received.filter((r) => r.path === started.path && r.body.includes(uuid));
      await waitFor(() => uuids.every((uuid) => deliveredOf(uuid).length > 0), {
        timeoutMs: 60_000,
        what: 'every event delivered by the holder',
      });
      for (const uuid of uuids) {
        expect(deliveredOf(uuid).map((r) => JSON.parse(r.body.toString()).source.via)).toEqual([
          'websocket',
        ]);
      }
      expectOneSocketAtATime();
      const status = await request(t.baseUrl, 'GET', '/api/inbound/status', {
        token: await t.token('admin'),
      });
      expect(status.body.websocket).toMatchObject({ configured: true, state: 'connected' });
    },
    spawnTestMs(3),
  );

  it(
    'a holder killed with SIGKILL is replaced within 30 s, and the gap is recorded',
    async () => {
      const holder = await holderAmong(running);
      const count = platform.connections.length;
      holder.child.kill('SIGKILL');
      const killedAt = Date.now();
      await holder.exit;
      running = running.filter((w) => w !== holder);
      const next = await acknowledgedAfter(count, TAKEOVER_MS - (Date.now() - killedAt));
      expect(next.openedAt - killedAt).toBeLessThan(TAKEOVER_MS);
      await holderAmong(running);
      const gaps = await waitFor(
        async () => {
          const rows = await queryDatabase<{ started_at: Date; ended_at: Date | null }>(
            t.database.url,
            'SELECT started_at, ended_at FROM inbound_gaps',
          );
          return rows.length === 1 && rows[0].ended_at !== null && rows;
        },
        { what: 'one ended gap' },
      );
      expect(gaps[0].started_at.getTime()).toBeLessThanOrEqual(killedAt);
      expect(gaps[0].ended_at!.getTime()).toBeGreaterThan(killedAt);
      expectOneSocketAtATime();
    },
    spawnTestMs(1),
  );

  it(
    'a holder whose Redis connection is cut closes its socket at once; another takes over',
    async () => {
      // Every process started so far, ready or not, so none competes for the lease.
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exit));
      const redis = new URL(TEST_REDIS_URL);
      const proxy = new TcpProxy(redis.hostname, Number(redis.port || 6379));
      await proxy.start();
      try {
        const cut = await startWorker(t, {
          env: { ...env, REDIS_URL: `redis://127.0.0.1:${proxy.port}` },
          workers,
        });
        await holderAmong([cut]);
        const direct = await startWorker(t, { env, workers });
        expect(await stateOf(direct)).toBe('standby');
        const held = platform.current!;
        const count = platform.connections.length;
        await proxy.stop();
        await waitFor(() => held.closedAt !== null, {
          timeoutMs: TAKEOVER_MS,
          what: 'the cut holder closing its socket',
        });
        const next = await acknowledgedAfter(count, TAKEOVER_MS);
        expect(next.openedAt).toBeGreaterThanOrEqual(held.closedAt!);
        expect(await holderAmong([direct])).toBe(direct);
        expectOneSocketAtATime();
      } finally {
        await proxy.stop();
      }
    },
    spawnTestMs(2),
  );

  it(
    "a holder that wakes after losing its lease records no gap beside the new holder's socket",
    async () => {
      for (const worker of workers) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((w) => w.exit));
      const pair = [await startWorker(t, { env, workers })];
      pair.push(await startWorker(t, { env, workers }));
      const holder = await holderAmong(pair);
      const other = pair.find((w) => w !== holder)!;
      const openGaps = () =>
        queryDatabase(t.database.url, 'SELECT 1 FROM inbound_gaps WHERE ended_at IS NULL');
      await waitFor(async () => (await openGaps()).length === 0, { what: 'no gap open' });
      const count = platform.connections.length;
      // Paused (a stalled host, a long GC): its lease runs out while it cannot see it.
      holder.child.kill('SIGSTOP');
      try {
        // The paused holder cannot answer the close the platform sends it, so its socket
        // stays open beside the new one until it wakes.
        await waitFor(
          async () =>
            platform.connections.length > count &&
            platform.connections[platform.connections.length - 1].acknowledged &&
            (await stateOf(other)) === 'connected',
          { timeoutMs: TAKEOVER_MS * 2, what: 'the other process connected' },
        );
        await waitFor(async () => (await openGaps()).length === 0, {
          what: 'the takeover gap ended',
        });
      } finally {
        holder.child.kill('SIGCONT');
      }
      // It wakes, finds its lease and socket gone, and leaves the gaps to the holder.
      await waitFor(
        () => /no gap recorded: another process holds an acknowledged socket/.test(holder.output()),
        { timeoutMs: TAKEOVER_MS, what: 'the woken holder letting go' },
      );
      expect(await openGaps()).toEqual([]);
      expect(await stateOf(holder)).toBe('standby');
      expect(await holderAmong([other])).toBe(other);
    },
    spawnTestMs(2),
  );
});
