/**
 * Delivery throughput and latency of the dispatcher, beside a baseline measured in the same
 * run. Topology as deployed: this process is the API (publish, role api) and hosts M local
 * receivers on 127.0.0.1; a spawned process is the worker (role worker).
 *
 * - sustained: N events through DispatcherService.publish to M webhooks (one per receiver),
 *   as fast as publish goes; deliveries/s and publish→receipt latency p50/p99.
 * - paced: deliveries offered at RATE/s (default 500) for a few seconds; latency p50/p99.
 * - fan-out: one event to 1,000 webhooks; time until the receivers have all 1,000.
 * - baseline: bare Bull on the same Redis, a spawned consumer with the same concurrency that
 *   signs and POSTs the same bodies through a keep-alive undici pool to the same receivers;
 *   no PostgreSQL. Same three phases.
 *
 *   npx ts-node --transpile-only bench/dispatch.ts [events=4000] [receivers=4] [rate=500] [rounds=2]
 *   (env DELIVERY_CONCURRENCY, default 50, is used by both workers)
 *
 * - signing: CPU time per delivery of the signature headers alone, in this process: the seed's
 *   x-service-signature vs docs/receiving.md's headers (one secret, and two during a rotation), with and
 *   without opening the sealed secrets. Printed first; `bench/dispatch.ts signing` prints only it.
 *
 * The machine may be shared: the load average is printed, and the CPU time each worker
 * process spent per delivery in the sustained phase (from /proc), which load does not skew.
 */
import Bull from 'bull';
import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config/load-config';
import { deliveryBody, signBody } from '../src/delivery-record/delivery-body';
import { signatureHeaders, unixSeconds } from '../src/dispatcher/engine/delivery-signature';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { SubscriptionEvent } from '../src/webhooks/subscription-events';
import { Receiver, startReceiver } from '../test/support/receiver';
import { TEST_REDIS_URL, TestApp, deleteRedisKeys, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[events=4000] [receivers=4] [rate=500] [rounds=2]');

const EVENTS = Math.min(Number(process.argv[2] ?? 4000), 50_000);
const RECEIVERS = Math.min(Number(process.argv[3] ?? 4), 32);
const RATE = Math.min(Number(process.argv[4] ?? 500), 5_000);
const PACED_SECONDS = 6;
const FAN_OUT = 1000;
const PUBLISHERS = 16;
const ROUNDS = Math.min(Number(process.argv[5] ?? 2), 5);
const CONCURRENCY = Number(process.env.DELIVERY_CONCURRENCY ?? 50);
const DEADLINE = Date.now() + 8 * 60_000;
const SECRET = 'bench-secret-0123456789abcdef';
const ROOT = join(__dirname, '..');

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

/** User + system CPU time of a process so far, in ms (Linux /proc, 100 ticks/s). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Run {
  sustained: Figures;
  workerCpuUs: number;
  ownCpuUs: number;
  pgCpuUs: number;
  paced: Figures;
  fanOutMs: number;
}

interface Figures {
  perSecond: number;
  p50: number;
  p99: number;
  count: number;
}

/** What each side must provide: send one event to its `targets`, and a process to do the work. */
interface Side {
  name: string;
  /** The worker process. */
  pid(): number;
  /** Sends one event of `kind` to the webhooks subscribed to it; resolves when it is queued. */
  send(kind: SubscriptionEvent, n: number): Promise<void>;
}

/** Receipts on every receiver since `marks` (each receiver's count at the start of a phase). */
function receiptsSince(receivers: Receiver[], marks: number[]) {
  return receivers.flatMap((r, i) => r.received.slice(marks[i]));
}
const marksOf = (receivers: Receiver[]) => receivers.map((r) => r.received.length);
const eventIdOf = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { id: string }).id;

async function waitForReceipts(receivers: Receiver[], marks: number[], expected: number) {
  const count = () => receivers.reduce((sum, r, i) => sum + r.received.length - marks[i], 0);
  await waitFor(() => count() >= expected, {
    timeoutMs: Math.max(10_000, DEADLINE - Date.now()),
    intervalMs: 5,
    what: `${expected} receipts`,
  });
}

async function sustained(side: Side, receivers: Receiver[]): Promise<Figures> {
  const marks = marksOf(receivers);
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: PUBLISHERS }, async () => {
      while (next < EVENTS && Date.now() < DEADLINE) {
        const n = next++;
        await side.send('job.started', n);
      }
    }),
  );
  const expected = next * RECEIVERS;
  await waitForReceipts(receivers, marks, expected);
  return figures(receivers, marks, expected, (performance.now() - start) / 1000);
}

/** Events keep their send time in this map, keyed by event id (see Side.send). */
const sendTimes = new Map<string, number>();

function figures(
  receivers: Receiver[],
  marks: number[],
  expected: number,
  seconds: number,
): Figures {
  // Receipt times are Date.now() at the receiver; send times are Date.now() before publish.
  const took = receiptsSince(receivers, marks).map(
    (r) => r.receivedAt - sendTimes.get(eventIdOf(r.body))!,
  );
  return {
    perSecond: expected / seconds,
    p50: percentile(took, 0.5),
    p99: percentile(took, 0.99),
    count: took.length,
  };
}

async function paced(side: Side, receivers: Receiver[]): Promise<Figures> {
  const marks = marksOf(receivers);
  const eventsPerSecond = RATE / RECEIVERS;
  const total = Math.round(eventsPerSecond * PACED_SECONDS);
  const start = performance.now();
  const sends: Promise<void>[] = [];
  for (let n = 0; n < total && Date.now() < DEADLINE; n++) {
    const due = start + (n / eventsPerSecond) * 1000;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(side.send('job.started', n));
  }
  await Promise.all(sends);
  await waitForReceipts(receivers, marks, sends.length * RECEIVERS);
  return figures(receivers, marks, sends.length * RECEIVERS, (performance.now() - start) / 1000);
}

async function fanOut(side: Side, receivers: Receiver[]): Promise<number> {
  const marks = marksOf(receivers);
  const start = performance.now();
  await side.send('operation.complete', 0);
  await waitForReceipts(receivers, marks, FAN_OUT);
  return performance.now() - start;
}

function spawnProcess(args: string[], env: Record<string, string>): ChildProcess {
  // BENCH_CPU_PROF=dir writes a V8 CPU profile of each spawned worker there.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, '-r', 'ts-node/register/transpile-only', ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return child;
}

/** The baseline consumer: bare Bull, sign, POST through a keep-alive pool. No PostgreSQL. */
function baselineWorker(prefix: string): void {
  const queue = new Bull('bench-baseline', { redis: TEST_REDIS_URL, prefix });
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
  void queue.process(
    'deliver',
    CONCURRENCY,
    async (job: Bull.Job<{ url: string; body: string; id: string; kind: string }>) => {
      const body = Buffer.from(job.data.body, 'utf8');
      const res = await request(job.data.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          // Signed as the service signs (docs/receiving.md), so that both sides do the same work.
          ...signatureHeaders({
            deliveryId: job.data.id,
            body,
            timestamp: unixSeconds(new Date()),
            secrets: { current: SECRET, previous: null },
          }),
          'x-service-event': job.data.kind,
          'x-service-delivery': job.data.id,
          'x-service-attempt': String(job.attemptsMade + 1),
        },
        body,
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
    },
  );
  process.on('SIGTERM', () => void queue.close().then(() => process.exit(0)));
}

/**
 * Microseconds of CPU per delivery for signing alone, best of 3 runs of `iterations` each,
 * beside the seed's x-service-signature. No I/O: this is what docs/receiving.md adds to an attempt.
 */
function signingCost(iterations = 20_000): void {
  const cipher = new SecretCipherService(loadConfig({}));
  const sealed = cipher.encrypt(SECRET);
  const sealedPrevious = cipher.encrypt(`${SECRET}-previous`);
  const bodies = {
    'job.started body, 294 B': deliveryBody({
      id: randomUUID(),
      kind: 'job.started',
      createdAt: new Date(),
      data: {
        n: 1,
        topic: 'bench',
        uuid: '4444AAAiAAAAAiAiAiiAii==',
        host_id: 'x1yCzABCDEfg23HiJKl4mN',
      },
      source: {
        platform: 'zoom',
        event: 'meeting.started',
        event_ts: 1,
        account_id: 'acc',
        tracking_id: null,
        via: 'webhook',
      },
    }),
    '16 KiB body': JSON.stringify({ data: 'x'.repeat(16 * 1024 - 11) }),
  };
  const deliveryId = randomUUID();
  const ways: [string, (body: Buffer) => unknown][] = [
    ['seed: x-service-signature only', (body) => signBody(SECRET, body)],
    [
      'seed + opening the secret (the sender before Standard Webhooks signing)',
      (body) => signBody(cipher.decrypt(sealed), body),
    ],
    [
      'Standard Webhooks, one secret',
      (body) =>
        signatureHeaders({
          deliveryId,
          body,
          timestamp: unixSeconds(new Date()),
          secrets: { current: SECRET, previous: null },
        }),
    ],
    [
      'Standard Webhooks, rotation (two secrets)',
      (body) =>
        signatureHeaders({
          deliveryId,
          body,
          timestamp: unixSeconds(new Date()),
          secrets: { current: SECRET, previous: `${SECRET}-previous` },
        }),
    ],
    [
      'Standard Webhooks, one secret + opening it',
      (body) =>
        signatureHeaders({
          deliveryId,
          body,
          timestamp: unixSeconds(new Date()),
          secrets: { current: cipher.decrypt(sealed), previous: null },
        }),
    ],
    [
      'Standard Webhooks, rotation + opening both',
      (body) =>
        signatureHeaders({
          deliveryId,
          body,
          timestamp: unixSeconds(new Date()),
          secrets: { current: cipher.decrypt(sealed), previous: cipher.decrypt(sealedPrevious) },
        }),
    ],
  ];
  console.log(`signing per delivery (µs of CPU, best of 3 × ${iterations}):`);
  for (const [label, text] of Object.entries(bodies)) {
    const body = Buffer.from(text, 'utf8');
    const row = ways.map(([, sign]) => {
      let best = Infinity;
      for (let run = 0; run < 3; run++) {
        const start = process.cpuUsage();
        for (let i = 0; i < iterations; i++) sign(body);
        const used = process.cpuUsage(start);
        best = Math.min(best, (used.user + used.system) / iterations);
      }
      return best;
    });
    console.log(
      `  ${label}: ` +
        ways.map(([name], i) => `${name} ${row[i].toFixed(1)}`).join('; ') +
        `; per attempt Standard Webhooks signing adds ${(row[4] - row[1]).toFixed(1)} µs (${(row[5] - row[1]).toFixed(1)} µs during a rotation)`,
    );
  }
  console.log('');
}

async function main(): Promise<void> {
  signingCost();
  const receivers = await Promise.all(Array.from({ length: RECEIVERS }, () => startReceiver()));
  const throughputUrls = receivers.map((r) => r.route({}, 'throughput').url);
  const fanOutUrls = Array.from(
    { length: FAN_OUT },
    (_, i) => receivers[i % RECEIVERS].route({}, 'fan-out').url,
  );
  const children: ChildProcess[] = [];
  let t: TestApp | undefined;
  const baselinePrefix = `mebbench:${randomUUID().slice(0, 8)}`;
  try {
    t = await startTestApp({ env: { APP_ROLE: 'api', LOG_LEVEL: 'warn' } });
    const db = t.app.get(DataSource);
    const cipher = new SecretCipherService(t.config);
    await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       SELECT 'alpha', url, ARRAY[kind], $3, 'cdef'
       FROM unnest($1::text[], $2::text[]) AS x(url, kind)`,
      [
        [...throughputUrls, ...fanOutUrls],
        [...throughputUrls.map(() => 'job.started'), ...fanOutUrls.map(() => 'operation.complete')],
        cipher.encrypt(SECRET),
      ],
    );
    await db.query('ANALYZE webhooks');

    const port = String(20000 + Math.floor(Math.random() * 20000));
    const worker = spawnProcess(['src/main.ts'], {
      APP_ROLE: 'worker',
      PORT: port,
      LOG_LEVEL: 'warn',
      DATABASE_URL: t.config.database.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: t.config.redis.prefix,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      DELIVERY_CONCURRENCY: String(CONCURRENCY),
    });
    children.push(worker);
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200,
      { timeoutMs: 120_000, what: 'the worker' },
    );

    /** CPU time of every PostgreSQL backend serving the bench database (0 for the baseline). */
    const postgresCpuMs = async (): Promise<number> => {
      const rows: { pid: number }[] = await db.query(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return rows.reduce((sum, { pid }) => {
        try {
          return sum + cpuMsOf(pid);
        } catch {
          return sum; // ended meanwhile
        }
      }, 0);
    };

    const dispatcher = t.app.get(DispatcherService);
    const ours: Side = {
      name: 'dispatcher (publish → PostgreSQL → Bull → worker)',
      pid: () => worker.pid!,
      async send(kind, n) {
        const sent = Date.now();
        const { eventId } = await dispatcher.publish({ kind, data: { n, topic: 'bench' } });
        sendTimes.set(eventId, sent);
      },
    };

    const baselineQueue = new Bull('bench-baseline', {
      redis: TEST_REDIS_URL,
      prefix: baselinePrefix,
      defaultJobOptions: { attempts: 4, removeOnComplete: 1000, removeOnFail: 5000 },
    });
    const baselineWorkerProcess = spawnProcess(
      ['bench/dispatch.ts', 'baseline-worker', baselinePrefix],
      { DELIVERY_CONCURRENCY: String(CONCURRENCY) },
    );
    children.push(baselineWorkerProcess);
    const baseline: Side = {
      name: 'baseline (bare Bull → consumer, no PostgreSQL)',
      pid: () => baselineWorkerProcess.pid!,
      async send(kind, n) {
        const sent = Date.now();
        const event = {
          id: randomUUID(),
          kind,
          createdAt: new Date(),
          data: { n, topic: 'bench' },
          source: null,
        };
        sendTimes.set(event.id, sent);
        const body = deliveryBody(event);
        const urls = kind === 'job.started' ? throughputUrls : fanOutUrls;
        await baselineQueue.addBulk(
          urls.map((url) => ({
            name: 'deliver',
            data: { url, body, id: randomUUID(), kind },
          })),
        );
      },
    };

    console.log(
      `${EVENTS} events × ${RECEIVERS} receivers; worker concurrency ${CONCURRENCY}; ` +
        `${PUBLISHERS} concurrent publishers; ${ROUNDS} rounds, the two sides alternating; ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} on 2 cores\n`,
    );
    const sides = [ours, baseline];
    for (const side of sides) {
      // Warm-up: connections, JIT, query plans.
      const marks = marksOf(receivers);
      for (let n = 0; n < 50; n++) await side.send('job.started', n);
      await waitForReceipts(receivers, marks, 50 * RECEIVERS);
    }
    const runs = new Map(sides.map((side) => [side, [] as Run[]]));
    // Alternating, so that a change in the machine's load between rounds hits both sides.
    for (let round = 1; round <= ROUNDS && Date.now() < DEADLINE; round++) {
      for (const side of sides) {
        const workerBefore = cpuMsOf(side.pid());
        const pgBefore = await postgresCpuMs();
        const ownBefore = process.cpuUsage();
        const s = await sustained(side, receivers);
        const own = process.cpuUsage(ownBefore);
        const run: Run = {
          sustained: s,
          workerCpuUs: ((cpuMsOf(side.pid()) - workerBefore) * 1000) / s.count,
          ownCpuUs: (own.user + own.system) / s.count,
          pgCpuUs: (((await postgresCpuMs()) - pgBefore) * 1000) / s.count,
          paced: await paced(side, receivers),
          fanOutMs: await fanOut(side, receivers),
        };
        runs.get(side)!.push(run);
        console.log(
          `round ${round} ${side.name}\n` +
            `  sustained: ${s.count} deliveries, ${s.perSecond.toFixed(0)}/s, publish→receipt p50 ${s.p50} ms p99 ${s.p99} ms; ` +
            `CPU per delivery: worker ${run.workerCpuUs.toFixed(0)} µs, this process (publishers, receivers) ${run.ownCpuUs.toFixed(0)} µs, ` +
            `PostgreSQL ${side === ours ? `${run.pgCpuUs.toFixed(0)} µs` : 'not used'}\n` +
            `  paced at ${RATE}/s: ${run.paced.count} deliveries, p50 ${run.paced.p50} ms p99 ${run.paced.p99} ms\n` +
            `  fan-out to ${FAN_OUT} webhooks: all received in ${run.fanOutMs.toFixed(0)} ms`,
        );
      }
    }
    await baselineQueue.close();

    const best = (side: Side) => {
      const all = runs.get(side)!;
      return {
        perSecond: Math.max(...all.map((r) => r.sustained.perSecond)),
        pacedP99: Math.min(...all.map((r) => r.paced.p99)),
        fanOutMs: Math.min(...all.map((r) => r.fanOutMs)),
        workerCpuUs: Math.min(...all.map((r) => r.workerCpuUs)),
      };
    };
    const a = best(ours);
    const b = best(baseline);
    console.log(
      `\nbest of ${ROUNDS} rounds: ${a.perSecond.toFixed(0)}/s vs baseline ${b.perSecond.toFixed(0)}/s ` +
        `(${((100 * a.perSecond) / b.perSecond).toFixed(0)}%), worker CPU per delivery ` +
        `${a.workerCpuUs.toFixed(0)} vs ${b.workerCpuUs.toFixed(0)} µs (${((100 * a.workerCpuUs) / b.workerCpuUs).toFixed(0)}%), ` +
        `paced p99 ${a.pacedP99} vs ${b.pacedP99} ms, fan-out ${a.fanOutMs.toFixed(0)} vs ${b.fanOutMs.toFixed(0)} ms`,
    );
    console.log(
      `targets: ≥1500/s ${a.perSecond >= 1500 ? 'met' : 'MISSED'}, ` +
        `≥40% of baseline ${a.perSecond >= 0.4 * b.perSecond ? 'met' : 'MISSED'}, ` +
        `p99 < 100 ms at ${RATE}/s ${a.pacedP99 < 100 ? 'met' : 'MISSED'}, ` +
        `fan-out < 3 s ${a.fanOutMs < 3000 ? 'met' : 'MISSED'}`,
    );
  } finally {
    // SIGTERM first: the workers drain (and write their CPU profiles when asked to).
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    for (const r of receivers) await r.close();
    await t?.close();
    await deleteRedisKeys(baselinePrefix);
  }
}

if (process.argv[2] === 'baseline-worker') {
  baselineWorker(process.argv[3]);
} else if (process.argv[2] === 'signing') {
  signingCost();
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
