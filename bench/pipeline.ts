/**
 * The whole pipeline, POST /zoom/events → arrival at a subscriber, beside the bench's own
 * baselines measured in the same run (docs/benchmarks.md, issue 12). bench/dispatch.ts measures the
 * delivery stage alone; bench/inbound.ts the endpoint at fixed rates.
 *
 * Every side runs in its own process on a fresh database and queue prefix; this process only
 * generates load (undici, keep-alive, CONCURRENCY callers) and plays the subscriber (node:http
 * on 127.0.0.1), so the load and the receiving cost the same for every side.
 *
 * - e2e: one webhook subscribed to job.started; WARMUP events through the whole path (and
 *   delivered) first, then EVENTS unique signed meeting.started POSTed at CONCURRENCY.
 *   Deliveries/s (EVENTS ÷ first send → last arrival), POST → arrival p50/p99, ingest rate
 *   (answered 200 ÷ first send → last answer), peak RSS (sampled every 20 ms) and CPU per
 *   event of the serving process, of its PostgreSQL backends and of Redis. Sides:
 *     app          src/main.ts as deployed (node flags of `npm run start:prod`, the image's
 *                  command): NODE_ENV=production, APP_ROLE=all, logs at info to /dev/null;
 *                  DELIVERY_CONCURRENCY 50 and, like the baselines, all 50 free for its one
 *                  webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK=50)
 *     app, 10 per webhook   the same at the default DELIVERY_CONCURRENCY_PER_WEBHOOK (10): one
 *                  webhook's rate is then 10 ÷ the time a request holds its slot
 *     durable      bench/minimal-pipeline.ts durable: verify, one batched INSERT of inbound
 *                  row + delivery row, 200, Bull job, sign, POST, one batched attempt record
 *     chain        bench/minimal-pipeline.ts chain: the raw Bull chain (job → sign → POST, no
 *                  database, no HTTP: jobs added in its own process at CONCURRENCY)
 * - ingest: the same warm-up and burst against an endpoint whose work stops at the 200:
 *     app          APP_ROLE=api (no worker in the process), the webhook subscribed
 *     minimal      bench/minimal-pipeline.ts ingest: verify, one batched INSERT, 200
 * - fanout: the app (APP_ROLE=all) with FAN_OUT webhooks subscribed: one event POSTed, time to
 *   its 200 and until every webhook has it; a few times, after one warm-up event.
 * - cluster: the e2e burst on the app (APP_ROLE=all) over one Redis and over the three-master
 *   Redis Cluster of test/support/redis-topologies.sh (REDIS_CLUSTER_NODES; started if it is
 *   not up), which side goes first alternating round by round: the Cluster's deliveries/s
 *   beside one Redis's. The Redis CPU per event printed is 6379's, so the Cluster side's says
 *   nothing of the Cluster.
 * - tracing (not in the default phases): e2e (APP_ROLE=all) and ingest (APP_ROLE=api) with
 *   tracing off, then on (OTEL_EXPORTER_OTLP_ENDPOINT at a local OTLP/HTTP sink in a process of
 *   its own, the default http/protobuf, every trace sampled), alternating round by round; the
 *   summary gives on ÷ off per round and the median (docs/benchmarks.md: at least 0.9). With
 *   BENCH_BEFORE_ENTRY, the build before runs a third time per phase and round, tracing on.
 *
 * The app and the baselines run compiled, on plain node (see build()).
 *
 *   npx ts-node --transpile-only bench/pipeline.ts [events=5000] [concurrency=50] [warmup=2000]
 *     [rounds=1] [phases=e2e,ingest,fanout]
 *
 * With rounds > 1 the e2e and ingest sides alternate round by round, so a change in the
 * machine's load hits every side; the summary takes each side's median and the median ratio.
 * BENCH_BEFORE_ENTRY=<file> adds an earlier build of the app as one more side of every phase,
 * for a before/after in one run; BENCH_BEFORE_NODE_FLAGS='<flags>' runs that side with these
 * node flags instead of start:prod's and BENCH_NODE_EXTRA's (e.g. to measure a change of the
 * deployed flags: then the entry may be dist/main.js itself).
 * BENCH_NODE_EXTRA='<flags>' adds node flags to the app's own (e.g. `-r <preload>` to sample its
 * heap or GC); figures taken with it are not the deployed app's.
 */
import Redis from 'ioredis';
import { once } from 'node:events';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import type { AppConfig } from '../src/config/config.types';
import { TEST_REDIS_URL } from '../test/support/test-app';
import { deleteQueueKeys } from '../scripts/queue-keys';
import { CLUSTER_ENV, redisConfigOf, startRedisTopologies } from '../test/support/redis-topologies';
import { TestDatabase } from '../test/support/test-db';
import {
  BENCH_CLIENT,
  ENCRYPTION_KEY,
  ROOT,
  SUBSCRIBER_SECRET,
  Side,
  build,
  startApp,
  startMinimal,
} from './sides';
import { Subscriber } from './subscriber';
import { cpuSecondsOf, helpIfAsked, now, percentile, sampleRss, spawnNode } from './support';
import { recordTarget, scaled } from './results';

helpIfAsked(
  __filename,
  '[events=5000] [concurrency=50] [warmup=2000] [rounds=1] [phases=e2e,ingest,fanout]',
);

const EVENTS = Math.min(Number(process.argv[2] ?? 5000), 100_000);
const CONCURRENCY = Math.min(Number(process.argv[3] ?? 50), 512);
const WARMUP = Math.min(Number(process.argv[4] ?? 2000), 100_000);
const ROUNDS = Math.min(Number(process.argv[5] ?? 1), 5);
const PHASES = (process.argv[6] ?? 'e2e,ingest,fanout').split(',');
const FAN_OUT = scaled(1000);
const FAN_OUT_RECEIVERS = 4;
const FAN_OUT_TRIES = 3;

/** BENCH_BEFORE_ENTRY=<file>: an earlier build of the app, measured as one more side. */
const BEFORE = process.env.BENCH_BEFORE_ENTRY;
/** BENCH_BEFORE_NODE_FLAGS: that side's node flags, when they are not the deployed ones. */
const BEFORE_NODE_FLAGS = process.env.BENCH_BEFORE_NODE_FLAGS?.split(' ').filter(Boolean);
const BEFORE_LABEL = 'app before';

/** The app as the e2e and ingest phases run it (see startApp: DELIVERY_CONCURRENCY 50 …). */
const appSide = (
  role: 'all' | 'api',
  subscriberUrls: string[],
  entry?: string,
  label = 'app',
  env: Record<string, string> = {},
): Promise<Side> =>
  startApp({
    role,
    subscriberUrls,
    concurrency: CONCURRENCY,
    entry,
    label,
    flags: label === BEFORE_LABEL && BEFORE_NODE_FLAGS ? BEFORE_NODE_FLAGS : undefined,
    env: {
      DELIVERY_CONCURRENCY: '50',
      // The baselines keep DELIVERY_CONCURRENCY requests in flight to their one receiver; so
      // does the app, whose only webhook may then take every slot. docs/api.md#receiver-health's default of 10 per
      // webhook is measured as a side of its own (DEFAULT_LIMIT_ENV), and by bench/deployed.ts.
      DELIVERY_CONCURRENCY_PER_WEBHOOK: '50',
      ...env,
    },
  });
const minimalSide = (mode: 'durable' | 'ingest' | 'chain', receiverUrl: string) =>
  startMinimal(mode, receiverUrl, CONCURRENCY);

// ---------------------------------------------------------------- what is measured

/** CPU seconds so far of the PostgreSQL backends serving `database`. */
async function postgresCpuSeconds(database: TestDatabase | null): Promise<number> {
  if (database === null) return 0;
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows.reduce((sum, { pid }) => sum + (cpuSecondsOf(pid) || 0), 0);
  } finally {
    await client.end();
  }
}

let redisPid: number | undefined;
async function redisCpuSeconds(): Promise<number> {
  if (redisPid === undefined) {
    const redis = new Redis(TEST_REDIS_URL);
    const info = await redis.info('server');
    redis.disconnect();
    redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  }
  return cpuSecondsOf(redisPid);
}

/**
 * BENCH_TRACE=1: statements (transactions committed in the side's database) and Redis commands
 * (every client's: Redis counts them per server) so far, and of those the scripts run.
 */
async function roundTrips(
  database: TestDatabase | null,
): Promise<{ statements: number; redis: number; scripts: number }> {
  let statements = 0;
  if (database !== null) {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      // Statistics reach pg_stat_database within a second of a backend going idle.
      const { rows } = await client.query<{ n: string }>(
        'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
      );
      statements = Number(rows[0].n);
    } finally {
      await client.end();
    }
  }
  const redis = new Redis(TEST_REDIS_URL);
  const stats = await redis.info('commandstats');
  redis.disconnect();
  let calls = 0;
  let scripts = 0;
  for (const [, command, n] of stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    calls += Number(n);
    if (command === 'evalsha' || command === 'eval') scripts += Number(n);
  }
  return { statements, redis: calls, scripts };
}

interface Figures {
  side: string;
  http: boolean;
  deliveriesPerSecond: number;
  ingestPerSecond: number;
  arrivalP50: number;
  arrivalP99: number;
  answerP50: number;
  answerP99: number;
  peakRssMb: number;
  cpuMsPerEvent: { process: number; postgres: number; redis: number };
  not200: number;
  duplicates: number;
}

/** Warm-up, then the measured burst; `deliver` says whether arrivals are waited for. */
async function measure(side: Side, subscriber: Subscriber, deliver: boolean): Promise<Figures> {
  const warm = await side.burst('warm', WARMUP);
  if (deliver)
    await subscriber.waitFor(
      warm.map((s) => `${s.uuid} /hook`),
      `${side.name} warm-up`,
    );
  // Lets the warm-up's tail (attempt records, completed jobs) finish before the clock starts.
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const duplicatesBefore = subscriber.duplicates;
  const cpu = [
    cpuSecondsOf(side.pid),
    await postgresCpuSeconds(side.database),
    await redisCpuSeconds(),
  ];
  const tripsBefore = process.env.BENCH_TRACE ? await roundTrips(side.database) : null;
  const rss = sampleRss(side.pid);
  const start = now();
  const sent = await side.burst('burst', EVENTS);
  const lastAnswer = Math.max(...sent.map((s) => s.answeredAt));
  if (deliver)
    await subscriber.waitFor(
      sent.map((s) => `${s.uuid} /hook`),
      `${side.name} burst`,
    );
  const peakRssMb = rss.stop();
  const cpuAfter = [
    cpuSecondsOf(side.pid),
    await postgresCpuSeconds(side.database),
    await redisCpuSeconds(),
  ];
  const perEvent = (i: number) => ((cpuAfter[i] - cpu[i]) * 1000) / EVENTS;
  if (tripsBefore) {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await roundTrips(side.database);
    const per = (n: number) => (n / EVENTS).toFixed(2);
    console.log(
      `    per event: ${per(after.statements - tripsBefore.statements)} transactions, ` +
        `${per(after.redis - tripsBefore.redis)} Redis commands ` +
        `(${per(after.scripts - tripsBefore.scripts)} scripts)`,
    );
  }

  const spans = deliver ? sent.map((s) => subscriber.arrivalOf(s.uuid)! - s.sentAt) : [];
  const lastArrival = deliver ? Math.max(...sent.map((s) => subscriber.arrivalOf(s.uuid)!)) : NaN;
  const answers = sent.map((s) => s.answeredAt - s.sentAt);
  const ok = sent.filter((s) => s.status === 200).length;
  return {
    side: side.name,
    http: side.http,
    deliveriesPerSecond: EVENTS / ((lastArrival - start) / 1000),
    ingestPerSecond: ok / ((lastAnswer - start) / 1000),
    arrivalP50: percentile(spans, 0.5),
    arrivalP99: percentile(spans, 0.99),
    answerP50: percentile(answers, 0.5),
    answerP99: percentile(answers, 0.99),
    peakRssMb,
    cpuMsPerEvent: { process: perEvent(0), postgres: perEvent(1), redis: perEvent(2) },
    not200: sent.length - ok,
    duplicates: subscriber.duplicates - duplicatesBefore,
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
// CPU times are read in clock ticks (10 ms): over 5,000 events, 0.002 ms an event.
const f3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : '-');

function print(f: Figures, deliver: boolean): void {
  const cpu = f.cpuMsPerEvent;
  console.log(
    `  ${f.side}\n` +
      (deliver
        ? `    ${f0(f.deliveriesPerSecond).padStart(6)} deliveries/s   ${f.http ? 'POST' : 'add'} → arrival p50 ${f0(f.arrivalP50)} ms  p99 ${f0(f.arrivalP99)} ms\n`
        : '') +
      (f.http
        ? `    ${f0(f.ingestPerSecond).padStart(6)} answered 200/s  answer p50 ${f2(f.answerP50)} ms  p99 ${f2(f.answerP99)} ms`
        : `    ${f0(f.ingestPerSecond).padStart(6)} jobs added/s (in its own process, no HTTP)`) +
      `   peak RSS ${f0(f.peakRssMb)} MB\n` +
      `    CPU per event: process ${f3(cpu.process)} ms, PostgreSQL ${f3(cpu.postgres)} ms, Redis ${f3(cpu.redis)} ms` +
      (f.not200 > 0 ? `   ${f.not200} NOT 200` : '') +
      (f.duplicates > 0 ? `   ${f.duplicates} duplicate arrivals` : ''),
  );
}

/** The middle value, or the mean of the two middle ones. */
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

// ---------------------------------------------------------------- phases

/** Each side in turn, started fresh and stopped after its measurement. */
async function measureEach(
  starters: (() => Promise<Side>)[],
  subscriber: Subscriber,
  deliver: boolean,
): Promise<Figures[]> {
  const figures: Figures[] = [];
  for (const start of starters) {
    const side = await start();
    try {
      figures.push(await measure(side, subscriber, deliver));
    } finally {
      await side.close();
    }
    print(figures[figures.length - 1], deliver);
  }
  return figures;
}

/** The app as configured by default: at most 10 attempts in flight to one webhook. */
const DEFAULT_LIMIT_ENV = { DELIVERY_CONCURRENCY_PER_WEBHOOK: '10' };
/** Where each side's figures are in a round. */
const SIDE = { app: 0, durable: 1, chain: 2, defaultLimit: 3, before: 4 } as const;

async function endToEnd(subscriber: Subscriber): Promise<Figures[][]> {
  const hook = `${subscriber.urls[0]}/hook`;
  const starters: (() => Promise<Side>)[] = [
    () => appSide('all', [hook]),
    () => minimalSide('durable', hook),
    () => minimalSide('chain', hook),
    () => appSide('all', [hook], undefined, 'app, 10 per webhook', DEFAULT_LIMIT_ENV),
    ...(BEFORE ? [() => appSide('all', [hook], BEFORE, BEFORE_LABEL)] : []),
  ];
  const rounds: Figures[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(
      `e2e round ${round}: ${WARMUP} warm-up events delivered, then ${EVENTS} at concurrency ${CONCURRENCY}`,
    );
    const figures = await measureEach(starters, subscriber, true);
    rounds.push(figures);
  }
  return rounds;
}

/**
 * Ingest alone, once per round like the e2e phase: the app's CPU per ingested event moves by a
 * fifth from one run to the next (the baseline's by far less), so one run's ratio says little.
 */
async function ingest(subscriber: Subscriber): Promise<Figures[][]> {
  const hook = `${subscriber.urls[0]}/hook`;
  const rounds: Figures[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(
      `ingest round ${round}: ${WARMUP} warm-up events, then ${EVENTS} at concurrency ${CONCURRENCY}`,
    );
    rounds.push(
      await measureEach(
        [
          () => appSide('api', [hook]),
          () => minimalSide('ingest', hook),
          ...(BEFORE ? [() => appSide('api', [hook], BEFORE, BEFORE_LABEL)] : []),
        ],
        subscriber,
        false,
      ),
    );
  }
  return rounds;
}

/** One event to FAN_OUT webhooks: time to the POST's 200, and until every webhook has it. */
async function fanOut(
  entry?: string,
  label = 'app',
): Promise<{ answerMs: number; firstMs: number; allMs: number }[]> {
  const receivers = new Subscriber();
  await receivers.start(FAN_OUT_RECEIVERS);
  const side = await appSide('all', [], entry, label);
  try {
    const cipher = new SecretCipherService({ secretsEncryptionKey: ENCRYPTION_KEY } as AppConfig);
    const paths = Array.from({ length: FAN_OUT }, (_, i) => `/fan/${i}`);
    const urls = paths.map((p, i) => `${receivers.urls[i % FAN_OUT_RECEIVERS]}${p}`);
    // Straight into the table: the API's per-client webhook limit is far below FAN_OUT. Owned
    // by the bench's client: webhooks of a client AUTH_CLIENTS does not list receive nothing.
    const client = new Client({ connectionString: side.database!.url });
    await client.connect();
    await client.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       SELECT $3, url, ARRAY['job.started'], $2, '0123' FROM unnest($1::text[]) AS u(url)`,
      [urls, cipher.encrypt(SUBSCRIBER_SECRET), BENCH_CLIENT.client_id],
    );
    await client.query('ANALYZE webhooks');
    await client.end();

    const runs: { answerMs: number; firstMs: number; allMs: number }[] = [];
    for (let i = 0; i <= FAN_OUT_TRIES; i++) {
      const start = now();
      const [sent] = await side.burst(`fan${i}`, 1);
      await receivers.waitFor(
        paths.map((p) => `${sent.uuid} ${p}`),
        'fan-out',
      );
      const times = paths.map((p) => receivers.arrivalOf(sent.uuid, p)!);
      // The first is the warm-up.
      if (i > 0) {
        runs.push({
          answerMs: sent.answeredAt - start,
          firstMs: Math.min(...times) - start,
          allMs: Math.max(...times) - start,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    console.log(
      `fan-out: one event to ${FAN_OUT} webhooks (app, APP_ROLE=all), after one warm-up event\n` +
        runs
          .map(
            (r, i) =>
              `  try ${i + 1}: answered in ${f0(r.answerMs)} ms, first arrival at ${f0(r.firstMs)} ms, all ${FAN_OUT} arrived in ${f0(r.allMs)} ms`,
          )
          .join('\n'),
    );
    return runs;
  } finally {
    await side.close();
    receivers.close();
  }
}

// ---------------------------------------------------------------- tracing on and off

/** A local OTLP/HTTP collector stand-in: answers every export 200 and counts what it got. */
const OTLP_SINK = `
const http = require('node:http');
let requests = 0, bytes = 0;
const server = http.createServer((req, res) => {
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => { requests++; res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', () => process.send({ requests, bytes }));`;

async function startSink(): Promise<{
  url: string;
  counts: () => Promise<string>;
  stop: () => void;
}> {
  const child = spawnNode(['-e', OTLP_SINK], ROOT, {}, ['ignore', 'ignore', 'inherit', 'ipc']);
  const [{ port }] = (await once(child, 'message')) as [{ port: number }];
  return {
    url: `http://127.0.0.1:${port}`,
    async counts() {
      child.send('counts');
      const [c] = (await once(child, 'message')) as [{ requests: number; bytes: number }];
      return `${c.requests} exports, ${(c.bytes / 1e6).toFixed(1)} MB`;
    },
    stop: () => child.kill('SIGKILL'),
  };
}

/** Per round: [one Redis, the Cluster]. */
async function onCluster(subscriber: Subscriber): Promise<Figures[][]> {
  const hook = `${subscriber.urls[0]}/hook`;
  await startRedisTopologies();
  const rounds: Figures[][] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const sides = [
        () => appSide('all', [hook], undefined, 'app, one Redis'),
        () => appSide('all', [hook], undefined, 'app, Redis Cluster of 3 masters', CLUSTER_ENV),
      ];
      // The machine's load drifts within a round: each side goes first every other round.
      const clusterFirst = round % 2 === 0;
      console.log(
        `cluster round ${round}: ${clusterFirst ? 'the Cluster, then one Redis' : 'one Redis, then the Cluster'}; ` +
          `${WARMUP} warm-up events delivered, then ${EVENTS} at concurrency ${CONCURRENCY}`,
      );
      const figures = await measureEach(
        clusterFirst ? [...sides].reverse() : sides,
        subscriber,
        true,
      );
      rounds.push(clusterFirst ? [...figures].reverse() : figures);
    }
  } finally {
    // Each side's own close deletes its keys on one Redis only (bench/sides.ts).
    await deleteQueueKeys(redisConfigOf(CLUSTER_ENV), 'mebbench');
  }
  return rounds;
}

/** Per round, of each phase: [off, on] and, with BENCH_BEFORE_ENTRY, [before, on] after them. */
interface TracedRound {
  e2e: Figures[];
  ingest: Figures[];
}

async function tracingOnOff(subscriber: Subscriber): Promise<TracedRound[]> {
  const hook = `${subscriber.urls[0]}/hook`;
  const sink = await startSink();
  const on = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  const sides = (role: 'all' | 'api') => [
    () => appSide(role, [hook], undefined, 'app, tracing off'),
    () => appSide(role, [hook], undefined, 'app, tracing on', on),
    ...(BEFORE ? [() => appSide(role, [hook], BEFORE, `${BEFORE_LABEL}, tracing on`, on)] : []),
  ];
  const rounds: TracedRound[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(
        `tracing round ${round}: off, then on${BEFORE ? ', then the build before on' : ''}; ` +
          `${WARMUP} warm-up events, then ${EVENTS} at concurrency ${CONCURRENCY}`,
      );
      const e2e = await measureEach(sides('all'), subscriber, true);
      const ingest = await measureEach(sides('api'), subscriber, false);
      console.log(`  the sink has received ${await sink.counts()} so far`);
      rounds.push({ e2e, ingest });
    }
  } finally {
    sink.stop();
  }
  return rounds;
}

async function main(): Promise<void> {
  build();
  console.log(
    `bench/pipeline.ts: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start, ${new Date().toISOString()}\n`,
  );
  const subscriber = new Subscriber();
  await subscriber.start(1);
  try {
    // The bench's own sender and receiver are compiled by V8 as they run, so without this the
    // first side measured (the app) met them cold; the first round was often the app's lowest
    // (ingest alone in five rounds: 0.45x, then 0.53x-0.56x). One burst, not counted, first.
    if (PHASES.includes('e2e') || PHASES.includes('ingest')) {
      console.log('bench warm-up (not counted): the minimal durable pipeline, once');
      await measureEach(
        [() => minimalSide('durable', `${subscriber.urls[0]}/hook`)],
        subscriber,
        true,
      );
      console.log('');
    }
    const e2e = PHASES.includes('e2e') ? await endToEnd(subscriber) : [];
    const ing = PHASES.includes('ingest') ? await ingest(subscriber) : [];
    const fan = PHASES.includes('fanout') ? await fanOut() : [];
    const fanBefore = PHASES.includes('fanout') && BEFORE ? await fanOut(BEFORE, BEFORE_LABEL) : [];
    const traced = PHASES.includes('tracing') ? await tracingOnOff(subscriber) : [];
    const clustered = PHASES.includes('cluster') ? await onCluster(subscriber) : [];

    console.log('\nsummary' + (ROUNDS > 1 ? ` (medians of ${ROUNDS} rounds)` : ''));
    const lines: string[] = [];
    if (e2e.length > 0) {
      const of = (i: number, pick: (f: Figures) => number) => median(e2e.map((r) => pick(r[i])));
      // Ratios within each round, where both sides met the same machine.
      const perRound = e2e.map(
        (r) => r[SIDE.app].deliveriesPerSecond / r[SIDE.durable].deliveriesPerSecond,
      );
      const [app, durable, chain, defaultLimit] = [
        SIDE.app,
        SIDE.durable,
        SIDE.chain,
        SIDE.defaultLimit,
      ].map((i) => ({
        rate: of(i, (f) => f.deliveriesPerSecond),
        p50: of(i, (f) => f.arrivalP50),
        p99: of(i, (f) => f.arrivalP99),
        ingest: of(i, (f) => f.ingestPerSecond),
        rss: of(i, (f) => f.peakRssMb),
      }));
      lines.push(
        `  e2e deliveries/s: app ${f0(app.rate)}, minimal durable ${f0(durable.rate)}, raw Bull chain ${f0(chain.rate)}; ` +
          `app ÷ durable per round ${perRound.map((r) => `${r.toFixed(2)}x`).join(', ')}, median ${median(perRound).toFixed(2)}x ` +
          `(target ≥ 1.0x: ${median(perRound) >= 1 ? 'met' : 'MISSED'}), ` +
          `app ÷ chain ${ratio(app.rate, chain.rate)}`,
        `  e2e POST → arrival: app p50 ${f0(app.p50)} ms p99 ${f0(app.p99)} ms (target p50 < 300 ms: ${app.p50 < 300 ? 'met' : 'MISSED'}); ` +
          `durable p50 ${f0(durable.p50)} ms p99 ${f0(durable.p99)} ms; chain p50 ${f0(chain.p50)} ms p99 ${f0(chain.p99)} ms`,
        `  e2e ingest during the burst: app ${f0(app.ingest)}/s, durable ${f0(durable.ingest)}/s (${ratio(app.ingest, durable.ingest)})`,
        `  peak RSS in the burst: app ${f0(app.rss)} MB (target < 200 MB: ${app.rss < 200 ? 'met' : 'MISSED'}), durable ${f0(durable.rss)} MB, chain ${f0(chain.rss)} MB`,
      );
      recordTarget({
        target: 'end to end, 5,000 events at concurrency 50: at least the minimal durable pipeline',
        figure: `${f0(app.rate)} deliveries/s`,
        baseline: `minimal durable ${f0(durable.rate)}/s (raw Bull chain ${f0(chain.rate)}/s)`,
        ratio: `${median(perRound).toFixed(2)}x`,
        met: median(perRound) >= 1,
      });
      recordTarget({
        target: 'end to end, same burst: POST → arrival p50 under 300 ms',
        figure: `p50 ${f0(app.p50)} ms (p99 ${f0(app.p99)} ms)`,
        baseline: `minimal durable p50 ${f0(durable.p50)} ms`,
        ratio: '-',
        met: app.p50 < 300,
      });
      recordTarget({
        target: 'peak RSS under 200 MB in the burst',
        figure: `${f0(app.rss)} MB`,
        baseline: `minimal durable ${f0(durable.rss)} MB`,
        ratio: '-',
        met: app.rss < 200,
      });
      lines.push(
        `  app at the default 10 in flight per webhook: ${f0(defaultLimit.rate)} deliveries/s ` +
          `(${ratio(defaultLimit.rate, durable.rate)} of durable), p50 ${f0(defaultLimit.p50)} ms ` +
          `p99 ${f0(defaultLimit.p99)} ms, peak RSS ${f0(defaultLimit.rss)} MB`,
      );
      if (BEFORE) {
        const before = {
          rate: of(SIDE.before, (f) => f.deliveriesPerSecond),
          p50: of(SIDE.before, (f) => f.arrivalP50),
          p99: of(SIDE.before, (f) => f.arrivalP99),
          rss: of(SIDE.before, (f) => f.peakRssMb),
        };
        lines.push(
          `  app before: ${f0(before.rate)} deliveries/s (${ratio(before.rate, durable.rate)} of durable), ` +
            `p50 ${f0(before.p50)} ms p99 ${f0(before.p99)} ms, peak RSS ${f0(before.rss)} MB; ` +
            `after ÷ before ${ratio(app.rate, before.rate)}`,
        );
      }
    }
    if (ing.length > 0) {
      const rate = (i: number) => median(ing.map((r) => r[i].ingestPerSecond));
      const perRound = ing.map((r) => r[0].ingestPerSecond / r[1].ingestPerSecond);
      recordTarget({
        target: 'ingest (verified, stored, 200): at least 0.5 of a minimal durable ingest',
        figure: `${f0(rate(0))}/s`,
        baseline: `minimal durable ingest ${f0(rate(1))}/s`,
        ratio: `${median(perRound).toFixed(2)}x`,
        met: median(perRound) >= 0.5,
      });
      lines.push(
        `  ingest: app (api) ${f0(rate(0))}/s, minimal durable ingest ${f0(rate(1))}/s; ` +
          `app ÷ minimal per round ${perRound.map((r) => `${r.toFixed(2)}x`).join(', ')}, ` +
          `median ${median(perRound).toFixed(2)}x ` +
          `(target ≥ 0.5x: ${median(perRound) >= 0.5 ? 'met' : 'MISSED'})`,
      );
      if (BEFORE) {
        lines.push(
          `  ingest, app before (api): ${f0(rate(2))}/s (${ratio(rate(2), rate(1))} of minimal)`,
        );
      }
    }
    if (fan.length > 0) {
      const worst = Math.max(...fan.map((r) => r.allMs));
      recordTarget({
        target: `one event to ${FAN_OUT.toLocaleString('en')} webhooks in under 1 s`,
        figure: `slowest of ${fan.length}: ${f0(worst)} ms`,
        baseline: '1,000 ms',
        ratio: '-',
        met: worst < 1000,
      });
      lines.push(
        `  fan-out to ${FAN_OUT}: slowest of ${fan.length} ${f0(worst)} ms (target < 1 s: ${worst < 1000 ? 'met' : 'MISSED'}), ` +
          `answered in at most ${f0(Math.max(...fan.map((r) => r.answerMs)))} ms`,
      );
    }
    if (fanBefore.length > 0) {
      lines.push(
        `  fan-out to ${FAN_OUT}, app before: slowest of ${fanBefore.length} ` +
          `${f0(Math.max(...fanBefore.map((r) => r.allMs)))} ms`,
      );
    }
    if (traced.length > 0) {
      const onOff = (phase: keyof TracedRound, on: number, pick: (f: Figures) => number) => {
        const perRound = traced.map((r) => pick(r[phase][on]) / pick(r[phase][0]));
        const m = median(perRound);
        if (on === 1) {
          recordTarget({
            target: `tracing on: ${phase === 'e2e' ? 'end-to-end' : 'ingest'} throughput at least 0.9 of tracing off`,
            figure: `${f0(median(traced.map((r) => pick(r[phase][on]))))}/s`,
            baseline: `tracing off ${f0(median(traced.map((r) => pick(r[phase][0]))))}/s`,
            ratio: `${m.toFixed(2)}x`,
            met: m >= 0.9,
          });
        }
        return (
          `${f0(median(traced.map((r) => pick(r[phase][on]))))}/s; on ÷ off per round ` +
          `${perRound.map((r) => `${r.toFixed(2)}x`).join(', ')}, median ${m.toFixed(2)}x ` +
          `(target ≥ 0.9x: ${m >= 0.9 ? 'met' : 'MISSED'})`
        );
      };
      const cpu = (phase: keyof TracedRound, i: number) =>
        f3(median(traced.map((r) => r[phase][i].cpuMsPerEvent.process)));
      for (const [phase, name, pick] of [
        ['e2e', 'e2e deliveries (APP_ROLE=all)', (f: Figures) => f.deliveriesPerSecond],
        ['ingest', 'ingest (APP_ROLE=api)', (f: Figures) => f.ingestPerSecond],
      ] as const) {
        lines.push(
          `  tracing, ${name}: off ${f0(median(traced.map((r) => pick(r[phase][0]))))}/s, ` +
            `on ${onOff(phase, 1, pick)}`,
        );
        if (BEFORE) lines.push(`    the build before, on ${onOff(phase, 2, pick)}`);
        lines.push(
          `    CPU per event of the process: off ${cpu(phase, 0)} ms, on ${cpu(phase, 1)} ms` +
            (BEFORE ? `, the build before on ${cpu(phase, 2)} ms` : ''),
        );
      }
    }
    if (clustered.length > 0) {
      const one = median(clustered.map((r) => r[0].deliveriesPerSecond));
      const cluster = median(clustered.map((r) => r[1].deliveriesPerSecond));
      const perRound = clustered.map((r) => r[1].deliveriesPerSecond / r[0].deliveriesPerSecond);
      const lost = clustered.reduce((n, r) => n + r[1].not200, 0);
      lines.push(
        `  on a Redis Cluster of 3 masters: ${f0(cluster)} deliveries/s, one Redis ${f0(one)}/s; ` +
          `Cluster ÷ one per round ${perRound.map((r) => `${r.toFixed(2)}x`).join(', ')}, ` +
          `median ${median(perRound).toFixed(2)}x; p50 ${f0(median(clustered.map((r) => r[1].arrivalP50)))} ms ` +
          `(one Redis ${f0(median(clustered.map((r) => r[0].arrivalP50)))} ms)`,
      );
      recordTarget({
        target:
          'the 5,000-event burst on a three-master Redis Cluster: every event answered 200 and delivered',
        figure: `${f0(cluster)} deliveries/s`,
        baseline: `one Redis ${f0(one)}/s`,
        ratio: `${median(perRound).toFixed(2)}x`,
        met: lost === 0,
      });
    }
    console.log(lines.join('\n'));
    console.log(
      `load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at end`,
    );
  } finally {
    subscriber.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
