/**
 * POST /zoom/events under load, on 127.0.0.1. The app runs in its own process (src/main.ts as
 * deployed, JSON request logs at info written to /dev/null), each phase on a fresh database
 * and queue prefix so no backlog carries over; this process only generates load (undici,
 * keep-alive) and plays the subscriber.
 *
 * 1. Throughput: CONNECTIONS callers send unique signed meeting.started events as fast as they
 *    are answered, for SECONDS: events accepted (and stored: rows counted) per second and
 *    p50/p99 response time, for role `api`. Beside it in the same run: the same app's cheapest
 *    route (GET /health/live: the framework's ceiling on this machine) and a bare node:http
 *    server (own process) that reads the body and checks the same HMAC, storing nothing.
 * 2. Fixed rate: 500 events/s for SECONDS (open loop: sends are scheduled, not waited for),
 *    p50/p99, for role `api` (an API pod) and role `all` (its worker in the same process).
 * 3. End to end at 200 events/s: event sent → the subscriber's server has the notification,
 *    p50/p99; one process of role `all`, then an `api` process beside a `worker` process.
 *
 * Each line also gives the server's CPU time per event (utime + stime from /proc). Set
 * BENCH_TRACE=1 for per-second figures and the pipeline's stages (from the database's
 * timestamps), BENCH_CPU_PROF=<dir> for V8 CPU profiles of the app processes.
 *
 *   npx ts-node --transpile-only bench/inbound.ts [seconds=10] [connections=32] [phases=123]
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { Pool } from 'undici';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { createTestDatabase, TestDatabase } from '../test/support/test-db';
import {
  CLIENTS,
  TEST_REDIS_URL,
  ZOOM_SECRET_TOKEN,
  deleteRedisKeys,
} from '../test/support/test-app';
import { freePort } from '../test/support/spawn-app';
import {
  cpuSecondsOf,
  helpIfAsked,
  percentile,
  stopChild,
  subscribe,
  waitReady,
  zoomHeaders,
} from './support';

helpIfAsked(__filename, '[seconds=10] [connections=32] [phases=123]');

const SECONDS = Math.min(Number(process.argv[2] ?? 10), 60);
const CONNECTIONS = Math.min(Number(process.argv[3] ?? 32), 256);
const PHASES = process.argv[4] ?? '123';
const MAX_EVENTS_PER_PHASE = 200_000;
const ROOT = join(__dirname, '..');

const ms = (v: number) => `${v.toFixed(1).padStart(6)} ms`;

let sequence = 0;
/** A unique, signed meeting.started as the platform would send it. */
function signedEvent(): { body: string; headers: Record<string, string>; uuid: string } {
  const uuid = `${randomBytes(12).toString('base64')}${++sequence}`;
  const body = JSON.stringify(meetingStarted(uuid, Date.now()));
  return { body, uuid, headers: zoomHeaders(body, ZOOM_SECRET_TOKEN) };
}

interface Target {
  url: string;
  pool: Pool;
  /** CPU seconds the serving process has used so far (Linux /proc), NaN when unknown. */
  cpuSeconds(): number;
  close(): Promise<void>;
}

async function send(
  target: Target,
): Promise<{ status: number; ms: number; uuid: string; at: number }> {
  const event = signedEvent();
  const at = performance.now();
  const res = await target.pool.request({
    path: '/zoom/events',
    method: 'POST',
    headers: event.headers,
    body: event.body,
  });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - at, uuid: event.uuid, at };
}

type Sender = (target: Target) => Promise<{ status: number; ms: number }>;

async function get(target: Target, path: string): Promise<{ status: number; ms: number }> {
  const at = performance.now();
  const res = await target.pool.request({ path, method: 'GET' });
  await res.body.text();
  return { status: res.statusCode, ms: performance.now() - at };
}

async function closedLoop(label: string, target: Target, call: Sender = send) {
  await warmUp(target);
  const took: number[] = [];
  let ok = 0;
  let other = 0;
  const cpuBefore = target.cpuSeconds();
  const start = performance.now();
  const end = start + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end && ok + other < MAX_EVENTS_PER_PHASE) {
        const r = await call(target);
        if (r.status === 200) ok++;
        else other++;
        took.push(r.ms);
      }
    }),
  );
  const rate = ok / ((performance.now() - start) / 1000);
  const cpu = ((target.cpuSeconds() - cpuBefore) * 1000) / (ok + other);
  console.log(
    `${label.padEnd(40)} ${rate.toFixed(0).padStart(6)} events/s  p50 ${ms(percentile(took, 0.5))}  p99 ${ms(percentile(took, 0.99))}` +
      `  server CPU ${cpu.toFixed(2)} ms/request` +
      (other > 0 ? `  (${other} not 200)` : ''),
  );
  return { rate, ok };
}

/** A fresh process answers slowly for its first seconds (JIT, connection pools): not measured. */
async function warmUp(target: Target): Promise<void> {
  const end = performance.now() + 5000;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < end) await send(target);
    }),
  );
}

/** Sends at a fixed rate whatever the answers do; returns each send's timing. */
async function openLoop(target: Target, perSecond: number, warm = true) {
  if (warm) await warmUp(target);
  const cpuBefore = target.cpuSeconds();
  const results: Promise<{ status: number; ms: number; uuid: string; at: number }>[] = [];
  const total = Math.min(perSecond * SECONDS, MAX_EVENTS_PER_PHASE);
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    results.push(send(target));
  }
  const done = await Promise.all(results);
  return Object.assign(done, { cpuBefore });
}

function connect(url: string, child: ChildProcess, close: () => Promise<void>): Target {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  return {
    url,
    pool,
    cpuSeconds: () => cpuSecondsOf(child.pid),
    close: async () => (await pool.close(), close()),
  };
}

/** The real app in its own process (src/main.ts, as `npm start`). */
async function startApp(
  role: 'api' | 'all' | 'worker',
  db: TestDatabase,
  prefix: string,
): Promise<Target> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
        : []),
      '-r',
      'ts-node/register/transpile-only',
      'src/main.ts',
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'test',
        PORT: String(port),
        APP_ROLE: role,
        LOG_LEVEL: 'info',
        DATABASE_URL: db.url,
        REDIS_URL: TEST_REDIS_URL,
        QUEUE_PREFIX: prefix,
        AUTH_CLIENTS: JSON.stringify([CLIENTS.alpha]),
        ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/health/ready`, child);
  return connect(url, child, () => stopChild(child));
}

/** The baseline: node:http, read the body, the same HMAC and constant-time compare, 200. */
async function startBaseline(): Promise<Target> {
  const code = `
    const { createServer } = require('node:http');
    const { createHmac, timingSafeEqual } = require('node:crypto');
    const secret = ${JSON.stringify(ZOOM_SECRET_TOKEN)};
    createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const ts = String(req.headers['x-zm-request-timestamp'] || '');
        const sig = String(req.headers['x-zm-signature'] || '');
        const expected = Buffer.from('v0=' + createHmac('sha256', secret).update('v0:' + ts + ':').update(body).digest('hex'));
        const given = Buffer.from(sig);
        const ok = given.length === expected.length && timingSafeEqual(given, expected) &&
          Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
        JSON.parse(body.toString('utf8'));
        res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
        res.end(ok ? '{"status":"accepted"}' : '{}');
      });
    }).listen(0, '127.0.0.1', function () { process.send(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', code], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [port] = (await once(child, 'message')) as [number];
  return connect(`http://127.0.0.1:${port}`, child, () => stopChild(child));
}

async function count(db: TestDatabase, sql: string): Promise<number> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query(sql)).rows[0].n);
  } finally {
    await client.end();
  }
}

/** Runs `fn` against a fresh app (own database and queue prefix), so no backlog carries over. */
type Deployment = 'api' | 'all' | 'api+worker';

/**
 * Runs `fn` against a fresh deployment (own database and queue prefix, so no backlog carries
 * over): one process of role `api` or `all`, or an `api` process beside a `worker` process as
 * in Kubernetes. The target is the API process; its CPU figure adds up both processes.
 */
async function withApp<T>(
  deployment: Deployment,
  fn: (app: Target, db: TestDatabase) => Promise<T>,
): Promise<T> {
  const db = await createTestDatabase();
  const prefix = `mebbench:${randomBytes(4).toString('hex')}`;
  try {
    const app = await startApp(deployment === 'all' ? 'all' : 'api', db, prefix);
    const worker = deployment === 'api+worker' ? await startApp('worker', db, prefix) : null;
    const target: Target = worker
      ? { ...app, cpuSeconds: () => app.cpuSeconds() + worker.cpuSeconds() }
      : app;
    try {
      return await fn(target, db);
    } finally {
      await app.close();
      await worker?.close();
    }
  } finally {
    await db.drop();
    await deleteRedisKeys(prefix);
  }
}

function reportFixed(
  label: string,
  target: Target,
  results: { status: number; ms: number }[] & { cpuBefore: number },
): number {
  const took = results.map((r) => r.ms);
  const p99 = percentile(took, 0.99);
  const cpu = ((target.cpuSeconds() - results.cpuBefore) * 1000) / results.length;
  console.log(
    `${label.padEnd(40)} p50 ${ms(percentile(took, 0.5))}  p99 ${ms(p99)}  max ${ms(Math.max(...took))}` +
      `  non-200: ${results.filter((r) => r.status !== 200).length}/${results.length}  server CPU ${cpu.toFixed(2)} ms/event`,
  );
  return p99;
}

/** A local subscriber: records when each notification (by meeting uuid) arrived. */
async function startSubscriber() {
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { uuid: string } };
      arrivals.set(body.data.uuid, at);
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    arrivals,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => server.close(),
  };
}

async function subscribeJobStarted(app: Target, url: string): Promise<void> {
  await subscribe(app.url, CLIENTS.alpha, {
    url,
    events: ['job.started'],
    secret: 'bench-subscriber-secret-0123',
  });
}

async function main(): Promise<void> {
  console.log(
    `${SECONDS} s per phase, ${CONNECTIONS} connections, unique signed meeting.started events\n`,
  );

  if (PHASES.includes('1')) await throughput();
  if (PHASES.includes('2')) {
    // 2. Fixed 500 events/s: the endpoint alone (an API pod), then with its worker in-process.
    await withApp('api', async (app) =>
      reportFixed('500 events/s, role api', app, await openLoop(app, 500)),
    );
    await withApp('all', async (app) =>
      reportFixed('500 events/s, role all', app, await openLoop(app, 500)),
    );
  }
  if (PHASES.includes('3')) {
    await endToEnd('all');
    await endToEnd('api+worker');
  }
}

/** 1. Throughput: the endpoint, the same app's cheapest route, and the bare HMAC server. */
async function throughput(): Promise<void> {
  const {
    rate: apiRate,
    stored,
    ok,
    ceiling,
  } = await withApp('api', async (app, db) => {
    const run = await closedLoop('app, role api: POST /zoom/events', app);
    const rows = await count(db, 'SELECT count(*) AS n FROM inbound_events');
    const health = await closedLoop('same app: GET /health/live (no store)', app, (t) =>
      get(t, '/health/live'),
    );
    return { ...run, stored: rows, ceiling: health.rate };
  });
  const baseline = await startBaseline();
  const bare = await closedLoop('baseline: bare node:http + same HMAC', baseline);
  await baseline.close();
  console.log(
    `every accepted event stored: ${stored >= ok ? 'yes' : 'NO'} (${stored} rows, ${ok} answers); ` +
      `endpoint / bare baseline ${(apiRate / bare.rate).toFixed(2)}x; endpoint / GET /health/live ${(apiRate / ceiling).toFixed(2)}x\n`,
  );
}

/** 3. End to end at 200 events/s, one subscriber of job.started; role all, then api + worker. */
async function endToEnd(deployment: Deployment): Promise<void> {
  await withApp(deployment, async (app, db) => {
    const subscriber = await startSubscriber();
    try {
      // Warm up before subscribing, and let the worker finish the warm-up events first.
      await warmUp(app);
      const drained = Date.now() + 60_000;
      while (
        (await count(db, 'SELECT count(*) AS n FROM inbound_events WHERE processed_at IS NULL')) >
          0 &&
        Date.now() < drained
      ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await subscribeJobStarted(app, subscriber.url);
      const sent = await openLoop(app, 200, false);
      const deadline = Date.now() + 30_000;
      while (subscriber.arrivals.size < sent.length && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      if (process.env.BENCH_TRACE) {
        const t0 = sent[0].at;
        for (let sec = 0; sec < SECONDS; sec++) {
          const b = sent.filter((r) => r.at - t0 >= sec * 1000 && r.at - t0 < (sec + 1) * 1000);
          const sp = b.flatMap((r) =>
            subscriber.arrivals.has(r.uuid) ? [subscriber.arrivals.get(r.uuid)! - r.at] : [],
          );
          console.log(
            sec,
            b.length,
            percentile(
              b.map((r) => r.ms),
              0.5,
            ).toFixed(1),
            percentile(sp, 0.5).toFixed(0),
            percentile(sp, 0.99).toFixed(0),
          );
        }
      }
      if (process.env.BENCH_TRACE) {
        const client = new Client({ connectionString: db.url });
        await client.connect();
        const stages = await client.query(`
          SELECT
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.created_at - i.received_at)) * 1000 AS inbound_p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.created_at - i.received_at)) * 1000 AS inbound_p99,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - d.created_at)) * 1000 AS delivery_wait_p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - d.created_at)) * 1000 AS delivery_wait_p99,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS post_p50
          FROM deliveries d JOIN events e ON e.id = d.event_id
          JOIN inbound_events i ON e.idempotency_key = 'inbound:' || i.id || ':job.started'
          JOIN delivery_attempts a ON a.delivery_id = d.id`);
        console.log(stages.rows[0]);
        await client.end();
      }
      const spans = sent.flatMap((r) => {
        const at = subscriber.arrivals.get(r.uuid);
        return at === undefined ? [] : [at - r.at];
      });
      console.log(
        `${`end to end at 200 events/s, ${deployment}`.padEnd(40)} p50 ${ms(percentile(spans, 0.5))}  p99 ${ms(percentile(spans, 0.99))}` +
          `  max ${ms(Math.max(...spans))}  delivered ${spans.length}/${sent.length}` +
          `  server CPU ${(((app.cpuSeconds() - sent.cpuBefore) * 1000) / sent.length).toFixed(2)} ms/event`,
      );
    } finally {
      subscriber.close();
    }
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
