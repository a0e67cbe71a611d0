/**
 * Time-partitioned history (docs/operations.md#partitions): bursts of platform events POSTed
 * to /zoom/events and delivered to a webhook (the end-to-end burst of docs/benchmarks.md) on
 * empty tables (the baseline: a second app on a database of its own, same run) alternating
 * with the same bursts on an app holding `deliveries` historical deliveries (their events, an
 * attempt each, and inbound events) spread over 30 days of partitions; then the drop of the
 * oldest day, with the ingest (POST → 200) and publish → arrival latencies of loads running
 * while it drops.
 *
 *   npx ts-node --transpile-only bench/partitions.ts [deliveries=20000000] [events=5000] [rate=100]
 *     [--reuse <database>]
 *
 * The history is generated day by day into its partitions (bench/partitioned-history.ts).
 * --reuse keeps it in that database (made if missing, never dropped): a later run with the
 * same count finds it there and generates only the day the last run dropped, so 20 million
 * rows are generated once. A smaller count shows the same shape (the drop's cost does not grow
 * with the other days' rows).
 */
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Pool } from 'undici';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { RetentionStore } from '../src/retention/retention.store';
import { startReceiver } from '../test/support/receiver';
import { startTestApp } from '../test/support/test-app';
import { ADMIN_DATABASE_URL, TestDatabase } from '../test/support/test-db';
import { waitFor } from '../test/support/wait-for';
import { createWebhook } from '../test/support/webhooks';
import { makeHistory } from './partitioned-history';
import { latenciesUntil, reportLatencies } from './publish-load';
import { recordTarget } from './results';
import { Sent, httpBurst } from './sides';
import { helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[deliveries=20000000] [events=5000] [rate=100] [--reuse <database>]');

const ARGV = process.argv.slice(2);
const REUSE_AT = ARGV.indexOf('--reuse');
/** The database the history is kept in across runs (--reuse), if any. */
const REUSE = REUSE_AT >= 0 ? (ARGV[REUSE_AT + 1] ?? '') : undefined;
if (REUSE !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(REUSE)) {
  console.error('bench/partitions.ts: --reuse needs a database name (a-z, 0-9, _; see --help)');
  process.exit(2);
}
const POSITIONAL = REUSE_AT >= 0 ? [...ARGV.slice(0, REUSE_AT), ...ARGV.slice(REUSE_AT + 2)] : ARGV;
const DELIVERIES = Number(POSITIONAL[0] ?? 20_000_000);
const EVENTS = Number(POSITIONAL[1] ?? 5000);
const RATE = Math.min(Number(POSITIONAL[2] ?? 100), 1000);
const PER_EVENT = 10;
const DAYS = 30;
const CONCURRENCY = 50;
const ROUNDS = 3;
const DAY_MS = 86_400_000;

/** The database named by --reuse, made if missing; kept when the run ends. */
async function keptDatabase(name: string): Promise<TestDatabase> {
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return { name, url: url.toString(), drop: () => Promise.resolve() };
}

/**
 * One app with its receiver and a webhook of its own: the bursts go to it. On a database kept
 * from an earlier run, that run's webhooks (and their deliveries) go first: their receivers are
 * gone. The history's own webhooks stay.
 */
async function side(database?: TestDatabase) {
  const t = await startTestApp({
    env: { LOG_LEVEL: 'warn', RETENTION_INTERVAL_MS: '86400000' },
    database,
  });
  if (database) {
    await t.app.get(DataSource).query(`DELETE FROM webhooks WHERE events <> '{operation.failed}'`);
  }
  const receiver = await startReceiver();
  // The bursts' job.started to one route, the publish load's job.completed to another.
  const route = receiver.route();
  await createWebhook(t, { url: route.url, events: ['job.started'] });
  const loadRoute = receiver.route();
  await createWebhook(t, { url: loadRoute.url, events: ['job.completed'] });
  const dispatcher = t.app.get(DispatcherService);
  const pool = new Pool(t.baseUrl, { connections: CONCURRENCY });
  /** Each POST answered 200, or the bench stops: a refused event would not be delivered. */
  const allAnswered = (sent: Sent[]): Sent[] => {
    const refused = sent.find((s) => s.status !== 200);
    if (refused) throw new Error(`POST /zoom/events answered ${refused.status}`);
    return sent;
  };
  /** POSTs `count` events, CONCURRENCY at a time; events/s from the first POST to the last arrival. */
  const burst = async (count: number): Promise<number> => {
    const startIndex = receiver.requests(route.path).length;
    const started = Date.now();
    allAnswered(await httpBurst(pool, 'burst', count, CONCURRENCY));
    await waitFor(() => receiver.requests(route.path).length - startIndex >= count, {
      timeoutMs: 300_000,
      what: 'every delivery of the burst',
    });
    return count / ((Date.now() - started) / 1000);
  };
  /** `rate` POSTs a second until `until` settles: each one's time to its 200 (the ingest). */
  const ingestUntil = async (rate: number, until: Promise<unknown>): Promise<number[]> => {
    let done = false;
    void until.finally(() => (done = true));
    const pending: Promise<Sent[]>[] = [];
    while (!done) {
      pending.push(httpBurst(pool, 'ingest', 1, 1));
      await new Promise((resolve) => setTimeout(resolve, 1000 / rate));
    }
    return allAnswered((await Promise.all(pending)).flat()).map((s) =>
      Math.round(s.answeredAt - s.sentAt),
    );
  };
  const close = async () => {
    await pool.close();
    await receiver.close();
    await t.close();
  };
  return { t, receiver, route, loadRoute, dispatcher, burst, ingestUntil, close };
}

async function main(): Promise<void> {
  // Two apps, two databases: one stays empty (the baseline), the other holds the history; their
  // bursts alternate, so that a machine whose load changes weighs on both alike.
  const empty = await side();
  const history = await side(REUSE === undefined ? undefined : await keptDatabase(REUSE));
  try {
    const { t, receiver, route, dispatcher } = history;
    const db = t.app.get(DataSource);
    await empty.burst(500); // warm-up, not counted
    await history.burst(500);

    // The webhooks the history was delivered to, inactive (a kept database has them already).
    const oldIds = async () =>
      (
        (await db.query(
          `SELECT id FROM webhooks WHERE events = '{operation.failed}' ORDER BY created_at, id`,
        )) as { id: string }[]
      ).map((w) => w.id);
    for (let i = (await oldIds()).length; i < PER_EVENT; i++) {
      await createWebhook(t, { url: `${route.url}-old-${i}`, events: ['operation.failed'] });
    }
    await db.query(`UPDATE webhooks SET active = false WHERE events = '{operation.failed}'`);
    const webhookIds = (await oldIds()).slice(0, PER_EVENT);
    const perDay = Math.ceil(DELIVERIES / PER_EVENT / DAYS);
    const loaded = perDay * PER_EVENT * DAYS;
    const loadStart = Date.now();
    const made = await makeHistory(db, { days: DAYS, perDay, webhookIds });
    const seconds = (Date.now() - loadStart) / 1000;
    const madeDeliveries = made * perDay * PER_EVENT;
    console.log(
      `history: ${loaded} deliveries with as many attempts, ${perDay * DAYS} events and as many ` +
        `inbound events over ${DAYS} days; ${made} of the ${DAYS} days generated in ` +
        `${seconds.toFixed(1)} s` +
        (made > 0
          ? ` (${(seconds / (madeDeliveries / 1e6)).toFixed(1)} s per million deliveries with ` +
            `their events, attempts and inbound events)`
          : '') +
        (REUSE ? `, the rest already in database ${REUSE}` : ''),
    );

    const rates: { empty: number; full: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Which side goes first alternates, so neither always meets a machine the other warmed.
      const [first, second] = round % 2 === 0 ? [empty, history] : [history, empty];
      const a = await first.burst(EVENTS);
      const b = await second.burst(EVENTS);
      rates.push(round % 2 === 0 ? { empty: a, full: b } : { empty: b, full: a });
      const { empty: e, full: f } = rates[rates.length - 1];
      console.log(
        `round ${round + 1}: ${EVENTS} events on empty tables ${e.toFixed(0)}/s, on ` +
          `${loaded} historical deliveries ${f.toFixed(0)}/s (${(f / e).toFixed(2)})`,
      );
    }
    const sum = (k: 'empty' | 'full') => rates.reduce((a, r) => a + r[k], 0);
    const ratio = sum('full') / sum('empty');
    console.log(
      `burst with the history: ${ratio.toFixed(2)} of the empty tables' rate over ${ROUNDS} ` +
        `alternating rounds (target >= 0.9: ${ratio >= 0.9 ? 'met' : 'MISSED'})`,
    );
    recordTarget({
      target: `${EVENTS} events POSTed and delivered on ${loaded} historical deliveries in ${DAYS} days of partitions`,
      figure: `${(sum('full') / ROUNDS).toFixed(0)} events/s (mean of ${ROUNDS} rounds)`,
      baseline: `empty tables ${(sum('empty') / ROUNDS).toFixed(0)} events/s`,
      ratio: `${ratio.toFixed(2)}x`,
      met: ratio >= 0.9,
    });

    // Two loads at once: platform events POSTed (the ingest: POST → 200) and events published
    // (publish → arrival at the receiver).
    const loadUntil = (until: Promise<unknown>) =>
      Promise.all([
        history.ingestUntil(RATE, until),
        latenciesUntil(dispatcher, receiver, history.loadRoute.path, RATE, until),
      ]);
    const report = (label: string, [ingest, arrival]: number[][]) => {
      console.log(
        `${label.padEnd(26)} ingest ${String(ingest.length).padStart(5)} POSTs  ` +
          `p50 ${percentile(ingest, 0.5)} ms  p99 ${percentile(ingest, 0.99)} ms  ` +
          `max ${Math.max(...ingest)} ms`,
      );
      reportLatencies(label, arrival);
    };

    const before = await loadUntil(new Promise((resolve) => setTimeout(resolve, 10_000)));
    report('without retention', before);
    // The cutoff that expires exactly the oldest day of the history: the end of that day.
    const oldestEnd = Math.floor(Date.now() / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
    const store = t.app.get(RetentionStore, { strict: false });
    const started = Date.now();
    // The loads start a second before, so that the drop happens under them.
    const drop = new Promise((resolve) => setTimeout(resolve, 1000)).then(async () => {
      const at = Date.now();
      const dropped = await store.dropPartitions(new Date(oldestEnd));
      return { dropped, ms: Date.now() - at };
    });
    const during = await loadUntil(drop.then(() => new Promise((r) => setTimeout(r, 1000))));
    const { dropped, ms } = await drop;
    report('while a day is dropped', during);
    const ingestP99 = percentile(during[0], 0.99);
    console.log(
      `dropped one day: ${dropped.deliveries} deliveries, ${dropped.deliveryAttempts} attempts, ` +
        `${dropped.events} events, ${dropped.inboundEvents} inbound events in ${ms} ms ` +
        `(target < 1000 ms: ${ms < 1000 ? 'met' : 'MISSED'}; ingest p99 target < 1000 ms: ` +
        `${ingestP99 < 1000 ? 'met' : 'MISSED'}); ${Date.now() - started} ms with the loads`,
    );
    recordTarget({
      target: `drop of one day's partitions (four tables) beside ${loaded} historical deliveries`,
      figure: `${ms} ms`,
      baseline: 'bound: under 1000 ms',
      ratio: '-',
      met: ms < 1000,
    });
    recordTarget({
      target: `ingest (POST /zoom/events → 200) p99 at ${RATE} events/s while a day is dropped`,
      figure: `${ingestP99} ms`,
      baseline: `${percentile(before[0], 0.99)} ms just before; bound: under 1000 ms`,
      ratio: '-',
      met: ingestP99 < 1000,
    });
    recordTarget({
      target: `publish → arrival p99 at ${RATE} events/s while a day is dropped`,
      figure: `${percentile(during[1], 0.99)} ms`,
      baseline: `${percentile(before[1], 0.99)} ms just before; bound: under 1000 ms`,
      ratio: '-',
      met: percentile(during[1], 0.99) < 1000,
    });
  } finally {
    for (const s of [empty, history]) await s.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
