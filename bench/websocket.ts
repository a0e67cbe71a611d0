/**
 * The same events by the platform's WebSocket and by POST /zoom/events (docs/inbound-sources.md):
 * stored and delivered per second, both in the same run, the socket's rate ÷ the webhook's.
 * The promise: the socket path reaches at least 0.9 of the webhook path.
 *
 * Each round starts the app (src/main.ts, role `all`, its own process) on a fresh database
 * and queue prefix, subscribes one webhook to `job.started` on a local receiver, and sends
 * EVENTS unique `meeting.started` events:
 * - webhook: signed POSTs, CONNECTIONS at a time (undici, keep-alive), as the platform sends;
 * - websocket: `message` frames pushed by the fake platform socket (test/support/fake-zoom-ws.ts)
 *   as fast as the socket takes them, the token from the fake token endpoint.
 * Stored: from the first send until PostgreSQL holds every event; delivered: until the
 * receiver has every notification. Rounds alternate (webhook, websocket, …) so that a machine
 * getting busier hurts both alike; the medians are compared.
 *
 *   npx ts-node --transpile-only bench/websocket.ts [events=5000] [rounds=3] [connections=32]
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { Pool } from 'undici';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { FakeZoom } from '../test/support/fake-zoom';
import { FakeZoomWs } from '../test/support/fake-zoom-ws';
import { freePort } from '../test/support/spawn-app';
import {
  CLIENTS,
  TEST_REDIS_URL,
  ZOOM_SECRET_TOKEN,
  deleteRedisKeys,
} from '../test/support/test-app';
import { createTestDatabase } from '../test/support/test-db';
import { helpIfAsked, spawnNode, stopChild, subscribe, waitReady, zoomHeaders } from './support';
import { recordTarget } from './results';

helpIfAsked(__filename, '[events=5000] [rounds=3] [connections=32]');

const EVENTS = Math.min(Number(process.argv[2] ?? 5000), 100_000);
const ROUNDS = Math.min(Number(process.argv[3] ?? 3), 10);
const CONNECTIONS = Math.min(Number(process.argv[4] ?? 32), 256);
const ROOT = join(__dirname, '..');
type Path = 'webhook' | 'websocket';

interface Round {
  path: Path;
  storedPerSecond: number;
  deliveredPerSecond: number;
}

/** A receiver that answers 200 and counts notifications. */
async function startReceiver(): Promise<{ url: string; count(): number; close(): Promise<void> }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function events(): string[] {
  const run = randomBytes(6).toString('base64url');
  return Array.from({ length: EVENTS }, (_, i) =>
    JSON.stringify(meetingStarted(`${run}-${i}`, Date.now())),
  );
}

async function storedCount(db: Client): Promise<number> {
  const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM inbound_events');
  return Number(rows[0].n);
}

/** Polls until `done` holds, returning when it first did (ms, performance clock). */
async function when(done: () => Promise<boolean> | boolean, what: string): Promise<number> {
  const deadline = performance.now() + 600_000;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`${what} not done in 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now();
}

async function round(path: Path, zoom: FakeZoom): Promise<Round> {
  const database = await createTestDatabase();
  const prefix = `mebbench:${randomBytes(4).toString('hex')}`;
  const receiver = await startReceiver();
  const platform =
    path === 'websocket'
      ? await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) })
      : null;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnNode(['-r', 'ts-node/register/transpile-only', 'src/main.ts'], ROOT, {
    NODE_ENV: 'test',
    PORT: String(port),
    APP_ROLE: 'all',
    LOG_LEVEL: 'warn',
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    AUTH_CLIENTS: JSON.stringify([CLIENTS.alpha]),
    ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...(platform ? { ...zoom.env(), ...platform.env(30_000) } : {}),
  });
  const db = new Client({ connectionString: database.url });
  try {
    await waitReady(`${url}/health/ready`, child, 180_000);
    await db.connect();
    await subscribe(url, CLIENTS.alpha, {
      url: receiver.url,
      events: ['job.started'],
      secret: 'bench-secret-0123456789abcdef',
    });
    if (platform) await when(() => platform.current?.acknowledged === true, 'the socket');
    const bodies = events();
    const start = performance.now();
    if (platform) {
      for (const body of bodies) platform.push(body);
    } else {
      const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
      let next = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (next < bodies.length) {
            const body = bodies[next++];
            const res = await pool.request({
              path: '/zoom/events',
              method: 'POST',
              headers: zoomHeaders(body, ZOOM_SECRET_TOKEN),
              body,
            });
            await res.body.text();
            if (res.statusCode !== 200) throw new Error(`POST /zoom/events: ${res.statusCode}`);
          }
        }),
      );
      await pool.close();
    }
    const stored = await when(async () => (await storedCount(db)) >= EVENTS, 'storing');
    const delivered = await when(() => receiver.count() >= EVENTS, 'delivering');
    return {
      path,
      storedPerSecond: EVENTS / ((stored - start) / 1000),
      deliveredPerSecond: EVENTS / ((delivered - start) / 1000),
    };
  } finally {
    await db.end().catch(() => undefined);
    await stopChild(child);
    await platform?.close();
    await receiver.close();
    await database.drop();
    await deleteRedisKeys(prefix);
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

async function main(): Promise<void> {
  const zoom = await FakeZoom.start();
  const rounds: Round[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      for (const path of ['webhook', 'websocket'] as const) {
        const r = await round(path, zoom);
        rounds.push(r);
        console.log(
          `round ${i + 1} ${path.padEnd(9)} stored ${r.storedPerSecond.toFixed(0).padStart(6)}/s` +
            `  delivered ${r.deliveredPerSecond.toFixed(0).padStart(6)}/s`,
        );
      }
    }
  } finally {
    await zoom.close();
  }
  const of = (path: Path, key: 'storedPerSecond' | 'deliveredPerSecond') =>
    median(rounds.filter((r) => r.path === path).map((r) => r[key]));
  const ratios = { storedPerSecond: 0, deliveredPerSecond: 0 };
  for (const key of ['storedPerSecond', 'deliveredPerSecond'] as const) {
    const ratio = of('websocket', key) / of('webhook', key);
    ratios[key] = ratio;
    console.log(
      `${key === 'storedPerSecond' ? 'stored   ' : 'delivered'}  webhook ${of('webhook', key).toFixed(0)}/s` +
        `  websocket ${of('websocket', key).toFixed(0)}/s  websocket ÷ webhook ${ratio.toFixed(2)}x` +
        `  (${ratio >= 0.9 ? 'meets' : 'BELOW'} 0.9)`,
    );
  }
  const rate = (path: Path) =>
    `delivered ${of(path, 'deliveredPerSecond').toFixed(0)}/s, stored ${of(path, 'storedPerSecond').toFixed(0)}/s`;
  recordTarget({
    target: `${EVENTS} events over the platform's WebSocket: stored and delivered at ≥ 0.9 of the same events POSTed to /zoom/events`,
    figure: `${rate('websocket')} (median of ${ROUNDS})`,
    baseline: `webhook: ${rate('webhook')}`,
    ratio: `${ratios.deliveredPerSecond.toFixed(2)}× delivered, ${ratios.storedPerSecond.toFixed(2)}× stored`,
    met: ratios.deliveredPerSecond >= 0.9 && ratios.storedPerSecond >= 0.9,
  });
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);
