/**
 * The pipeline as deployed (docs/benchmarks.md, third round; issue 25): every delivery setting at its
 * default (DELIVERY_CONCURRENCY 50, DELIVERY_CONCURRENCY_PER_WEBHOOK 10, no webhook limits
 * set), NODE_ENV=production, the app compiled with start:prod's node flags, and every
 * receiver in a process of its own (bench/receiver.ts), which also counts the most requests it
 * had open at once. Each run measures its sides one after the other in the same run:
 *
 * - fast: EVENTS (5,000) meeting.started POSTed at concurrency 50 to one webhook whose receiver
 *   answers at once. Sides: the app at its defaults; the app tuned as bench/pipeline.ts runs it
 *   (DELIVERY_CONCURRENCY_PER_WEBHOOK=50); the minimal durable pipeline. Targets: all delivered
 *   within 3 s of the last POST's answer, POST → arrival p99 under 2 s.
 * - slow: 2,000 events to one webhook whose receiver takes 50 ms. Target: all within
 *   1.2 × 10 s + 2 s of the first POST (10 s: 2,000 × 50 ms ÷ 10 in flight), never more than
 *   10 in flight. Beside it the minimal durable pipeline (50 in flight, no per-receiver limit).
 * - five: 3,000 events to five webhooks (15,000 deliveries), receivers answering at once.
 *   Target: all within 10 s of the first POST. Beside it the minimal durable pipeline (one
 *   delivery per event).
 * - workers: one API process and two worker processes, 1,000 events to one webhook whose
 *   receiver takes 100 ms. Target: never more than 10 in flight, all within 1.2 × 10 s + 3 s.
 * - history: the fast run's burst at the defaults, first on empty tables, then on tables that
 *   hold 30 days of a busy account (BENCH_HISTORY_DELIVERIES, 5,000,000 by default: that many
 *   ended deliveries over five webhooks, with their events, attempts and inbound events), loaded
 *   after the app has migrated, VACUUM ANALYZEd as autovacuum would have and written out to
 *   disk. Both apps stay up and their bursts alternate for BENCH_HISTORY_ROUNDS (3) rounds.
 *   Target: the median of the rounds' rate with the history ÷ without at least 0.9.
 *
 * BENCH_BEFORE_ENTRY=<file> adds an earlier build of the app, at the same defaults, as one more
 * side of every run (a before/after in one run).
 *
 *   npx ts-node --transpile-only bench/deployed.ts [runs=fast,slow,five,workers] (or history)
 */
import { ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ROOT, BASELINE_DIR, Side, build, startApp, startMinimal } from './sides';
import { helpIfAsked, now, percentile, spawnNode, stopChild } from './support';
import { recordTarget, scaled } from './results';

helpIfAsked(__filename, '[runs=fast,slow,five,workers] (comma-separated; also: history)');

const RUNS = (process.argv[2] ?? 'fast,slow,five,workers').split(',');
const CONCURRENCY = 50;
const ARRIVAL_TIMEOUT_MS = 180_000;
const BEFORE = process.env.BENCH_BEFORE_ENTRY;

/** A bench/receiver.ts process. */
class Receiver {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(delayMs: number): Promise<Receiver> {
    const child = spawnNode(
      [`${BASELINE_DIR}/receiver.js`],
      ROOT,
      { RECEIVER_DELAY_MS: String(delayMs) },
      ['ignore', 'ignore', 'inherit', 'ipc'],
    );
    const [{ port }] = (await once(child, 'message')) as [{ port: number }];
    return new Receiver(child, `http://127.0.0.1:${port}`);
  }

  private ask<T>(cmd: string, prefix?: string): Promise<T> {
    const answer = once(this.child, 'message') as Promise<[T]>;
    this.child.send({ cmd, prefix });
    return answer.then(([message]) => message);
  }

  /** Waits until `count` notifications of events whose uuids start with `tag` have arrived. */
  async waitFor(tag: string, count: number, what: string): Promise<void> {
    const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
    for (;;) {
      const { count: arrived } = await this.ask<{ count: number }>('count', `${tag}-`);
      if (arrived >= count) return;
      if (Date.now() > deadline) throw new Error(`${what}: ${count - arrived} never arrived`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  report() {
    return this.ask<{ arrivals: [string, number][]; duplicates: number; peakOpen: number }>(
      'report',
    );
  }

  reset() {
    return this.ask('reset');
  }

  close(): Promise<void> {
    return stopChild(this.child);
  }
}

interface Figures {
  side: string;
  deliveries: number;
  /** First POST → last arrival, s. */
  totalS: number;
  /** Last POST's answer → last arrival, s. */
  tailS: number;
  p50: number;
  p99: number;
  peakInFlight: number;
  duplicates: number;
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** Warm-up (delivered, not counted), then `events` POSTed and waited for at `paths`. */
async function measure(
  side: Side,
  receiver: Receiver,
  events: number,
  warmup: number,
  paths: string[],
): Promise<Figures> {
  await side.burst('warm', warmup);
  await receiver.waitFor('warm', warmup * paths.length, `${side.name} warm-up`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await receiver.reset();

  const start = now();
  const sent = await side.burst('burst', events);
  const lastAnswer = Math.max(...sent.map((s) => s.answeredAt));
  await receiver.waitFor('burst', events * paths.length, `${side.name} burst`);
  const { arrivals, duplicates, peakOpen } = await receiver.report();
  const at = new Map(arrivals);
  const spans: number[] = [];
  let last = 0;
  for (const s of sent) {
    for (const path of paths) {
      const arrived = at.get(`${s.uuid} ${path}`)!;
      spans.push(arrived - s.sentAt);
      last = Math.max(last, arrived);
    }
  }
  const figures = {
    side: side.name,
    deliveries: spans.length,
    totalS: (last - start) / 1000,
    tailS: (last - lastAnswer) / 1000,
    p50: percentile(spans, 0.5),
    p99: percentile(spans, 0.99),
    peakInFlight: peakOpen,
    duplicates,
  };
  console.log(
    `  ${figures.side}: ${figures.deliveries} deliveries in ${f2(figures.totalS)} s ` +
      `(${f0(figures.deliveries / figures.totalS)}/s), last arrival ${f2(figures.tailS)} s after ` +
      `the last answer; POST → arrival p50 ${f0(figures.p50)} ms p99 ${f0(figures.p99)} ms; ` +
      `most in flight at the receiver ${figures.peakInFlight}` +
      (duplicates > 0 ? `; ${duplicates} duplicate arrivals` : ''),
  );
  return figures;
}

async function measureEach(
  starters: (() => Promise<Side>)[],
  receiver: Receiver,
  events: number,
  warmup: number,
  paths: string[],
): Promise<Figures[]> {
  const figures: Figures[] = [];
  for (const start of starters) {
    const side = await start();
    try {
      figures.push(await measure(side, receiver, events, warmup, paths));
    } finally {
      await side.close();
    }
  }
  return figures;
}

const deployed = (
  subscriberUrls: string[],
  extra: { entry?: string; label?: string; env?: Record<string, string>; workers?: number } = {},
  role: 'all' | 'api' = 'all',
) => startApp({ role, subscriberUrls, concurrency: CONCURRENCY, ...extra });
const before = (subscriberUrls: string[], role: 'all' | 'api' = 'all', workers = 0) =>
  BEFORE
    ? [() => deployed(subscriberUrls, { entry: BEFORE, label: 'app before', workers }, role)]
    : [];

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

async function fast(): Promise<string[]> {
  const receiver = await Receiver.start(0);
  try {
    const hook = `${receiver.url}/hook`;
    console.log('fast: 5000 events to one webhook, receiver answers at once');
    const [app, tuned, durable] = await measureEach(
      [
        () => deployed([hook], { label: 'app, defaults' }),
        () =>
          deployed([hook], {
            label: 'app, tuned (50 per webhook)',
            env: { DELIVERY_CONCURRENCY_PER_WEBHOOK: '50' },
          }),
        () => startMinimal('durable', hook, CONCURRENCY),
        ...before([hook]),
      ],
      receiver,
      scaled(5000),
      scaled(1000),
      ['/hook'],
    );
    const fastRate = app.deliveries / app.totalS;
    const durableRate = durable.deliveries / durable.totalS;
    recordTarget({
      target: 'deployed, 5,000 events, receiver at once: all delivered within 3 s of the last POST',
      figure: `tail ${f2(app.tailS)} s (${f0(fastRate)}/s)`,
      baseline: `minimal durable ${f0(durableRate)}/s`,
      ratio: `${(fastRate / durableRate).toFixed(2)}x`,
      met: app.tailS <= 3,
    });
    recordTarget({
      target: 'deployed, same burst: POST → arrival p99 under 2 s',
      figure: `p99 ${f0(app.p99)} ms`,
      baseline: '2,000 ms',
      ratio: '-',
      met: app.p99 < 2000,
    });
    return [
      `fast: defaults ${f0(app.deliveries / app.totalS)}/s, tail ${f2(app.tailS)} s (target ≤ 3 s: ` +
        `${verdict(app.tailS <= 3)}), p99 ${f0(app.p99)} ms (target < 2000: ${verdict(app.p99 < 2000)}), ` +
        `peak ${app.peakInFlight} in flight; tuned ${f0(tuned.deliveries / tuned.totalS)}/s ` +
        `(defaults ÷ tuned ${(tuned.totalS / app.totalS).toFixed(2)}x); minimal durable ` +
        `${f0(durable.deliveries / durable.totalS)}/s`,
    ];
  } finally {
    await receiver.close();
  }
}

async function slow(): Promise<string[]> {
  const receiver = await Receiver.start(50);
  try {
    const hook = `${receiver.url}/hook`;
    console.log(
      'slow: 2000 events to one webhook, receiver takes 50 ms (floor 10 s at 10 in flight)',
    );
    const [app, durable] = await measureEach(
      [
        () => deployed([hook], { label: 'app, defaults' }),
        () => startMinimal('durable', hook, CONCURRENCY),
        ...before([hook]),
      ],
      receiver,
      scaled(2000),
      scaled(200),
      ['/hook'],
    );
    recordTarget({
      target: 'deployed, 2,000 events, receiver 50 ms: within 1.2 × 10 s + 2 s, ≤ 10 in flight',
      figure: `${f2(app.totalS)} s, peak ${app.peakInFlight} in flight`,
      baseline: `minimal durable (50 in flight) ${f2(durable.totalS)} s`,
      ratio: '-',
      met: app.totalS <= 14 && app.peakInFlight <= 10,
    });
    return [
      `slow: defaults ${f2(app.totalS)} s (target ≤ 14 s: ${verdict(app.totalS <= 14)}), ` +
        `peak ${app.peakInFlight} in flight (target ≤ 10: ${verdict(app.peakInFlight <= 10)}); ` +
        `minimal durable (50 in flight) ${f2(durable.totalS)} s`,
    ];
  } finally {
    await receiver.close();
  }
}

async function five(): Promise<string[]> {
  const receiver = await Receiver.start(0);
  try {
    const paths = Array.from({ length: 5 }, (_, i) => `/hook/${i}`);
    const hooks = paths.map((p) => `${receiver.url}${p}`);
    console.log('five: 3000 events to five webhooks (15,000 deliveries), receivers answer at once');
    const [app] = await measureEach(
      [() => deployed(hooks, { label: 'app, defaults' }), ...before(hooks)],
      receiver,
      scaled(3000),
      scaled(500),
      paths,
    );
    const [durable] = await measureEach(
      [() => startMinimal('durable', `${receiver.url}/hook`, CONCURRENCY)],
      receiver,
      scaled(3000),
      scaled(500),
      ['/hook'],
    );
    recordTarget({
      target: 'deployed, 3,000 events to five webhooks (15,000 deliveries): within 10 s',
      figure: `${f2(app.totalS)} s (${f0(app.deliveries / app.totalS)} deliveries/s)`,
      baseline: `minimal durable ${f0(durable.deliveries / durable.totalS)} deliveries/s (one per event)`,
      ratio: '-',
      met: app.totalS <= 10,
    });
    return [
      `five: defaults ${f2(app.totalS)} s for 15,000 (target ≤ 10 s: ${verdict(app.totalS <= 10)}), ` +
        `${f0(app.deliveries / app.totalS)} deliveries/s, p99 ${f0(app.p99)} ms; minimal durable ` +
        `${f0(durable.deliveries / durable.totalS)} deliveries/s (one per event)`,
    ];
  } finally {
    await receiver.close();
  }
}

async function workers(): Promise<string[]> {
  const receiver = await Receiver.start(100);
  try {
    const hook = `${receiver.url}/hook`;
    console.log('workers: 1 API + 2 workers, 1000 events, receiver takes 100 ms (floor 10 s)');
    const [app] = await measureEach(
      [
        () => deployed([hook], { label: 'app, defaults', workers: 2 }, 'api'),
        ...before([hook], 'api', 2),
      ],
      receiver,
      scaled(1000),
      scaled(100),
      ['/hook'],
    );
    recordTarget({
      target:
        'deployed, 1 API + 2 workers, 1,000 events, receiver 100 ms: within 1.2 × 10 s + 3 s, ≤ 10 in flight',
      figure: `${f2(app.totalS)} s, peak ${app.peakInFlight} in flight`,
      baseline: 'floor 10 s (1,000 × 100 ms ÷ 10)',
      ratio: '-',
      met: app.totalS <= 15 && app.peakInFlight <= 10,
    });
    return [
      `workers: defaults ${f2(app.totalS)} s (target ≤ 15 s: ${verdict(app.totalS <= 15)}), ` +
        `peak ${app.peakInFlight} in flight (target ≤ 10: ${verdict(app.peakInFlight <= 10)})`,
    ];
  } finally {
    await receiver.close();
  }
}

const HISTORY_DELIVERIES = Number(process.env.BENCH_HISTORY_DELIVERIES ?? scaled(5_000_000));
const HISTORY_WEBHOOKS = 5;

/**
 * Thirty days of ended deliveries behind the subscribed webhook and four inactive ones of the
 * same owner (so the burst still goes to one receiver), spread evenly up to an hour ago (inside
 * the default 30-day retention), each event with the inbound event it came from and each
 * delivery with its attempt: the rows the burst's statements and indexes have to live beside.
 */
/** Waits (up to two minutes) until the kernel holds less than 64 MB of unwritten data. */
async function settleDisk(): Promise<void> {
  const deadline = Date.now() + 120_000;
  const pendingKb = () =>
    readFileSync('/proc/meminfo', 'utf8')
      .split('\n')
      .filter((line) => /^(Dirty|Writeback):/.test(line))
      .reduce((kb, line) => kb + Number(line.split(/\s+/)[1]), 0);
  while (pendingKb() > 64 * 1024 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function loadHistory(databaseUrl: string): Promise<void> {
  const started = Date.now();
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const events = Math.ceil(HISTORY_DELIVERIES / HISTORY_WEBHOOKS);
    await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint, active)
       SELECT owner_client_id, url || '/old-' || g, events, secret_encrypted, secret_hint, false
       FROM webhooks, generate_series(1, $1) g`,
      [HISTORY_WEBHOOKS - 1],
    );
    await db.query(
      `INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload, received_at,
                                   processed_at)
       SELECT 'meeting.started', 'history-' || g, 0, 'AAAAAAAAAAAAAAAAAAAAAA',
              jsonb_build_object('event', 'meeting.started', 'payload', jsonb_build_object(
                'account_id', 'AAAAAAAAAAAAAAAAAAAAAA', 'object', jsonb_build_object(
                  'id', 85746065432, 'uuid', md5(g::text), 'host_id', 'x1yCzABCDEfg23HiJKl4mN',
                  'topic', 'Weekly sync', 'type', 2, 'duration', 60, 'timezone', 'UTC'))),
              now() - interval '1 hour' - (g * interval '29 days') / $1,
              now() - interval '1 hour' - (g * interval '29 days') / $1
       FROM generate_series(1, $1) g`,
      [events],
    );
    await db.query(
      `INSERT INTO events (kind, data, source, created_at, body)
       SELECT 'job.started', d, jsonb_build_object('type', 'zoom', 'event', 'meeting.started'),
              received_at, jsonb_build_object('event', 'job.started', 'data', d)::text
       FROM (SELECT received_at, jsonb_build_object('meeting_uuid', md5(identity_key),
                      'meeting_id', 85746065432, 'topic', 'Weekly sync',
                      'host_id', 'x1yCzABCDEfg23HiJKl4mN', 'started_at', received_at) d
             FROM inbound_events) i`,
    );
    await db.query(
      `INSERT INTO deliveries (webhook_id, event_id, event, body, status, attempt_count,
                               created_at, updated_at, completed_at, last_status_code)
       SELECT w.id, e.id, e.kind, e.body, 'succeeded', 1, e.created_at,
              e.created_at + interval '20 ms', e.created_at + interval '20 ms', 200
       FROM events e CROSS JOIN webhooks w`,
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code,
                                      response_body)
       SELECT id, 1, created_at, 15, 200, 'ok' FROM deliveries`,
    );
    await db.query('VACUUM ANALYZE');
    // A month's rows are on disk long before a burst: the gigabytes just written are flushed
    // first, so that the burst's commits do not queue behind the load's writes.
    await db.query('CHECKPOINT');
    await settleDisk();
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM deliveries');
    console.log(
      `  loaded ${rows[0].n} deliveries with their attempts, ${events} events and inbound ` +
        `events in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
  } finally {
    await db.end();
  }
}

const HISTORY_ROUNDS = Number(process.env.BENCH_HISTORY_ROUNDS ?? 3);

/**
 * Both apps (and, with BENCH_BEFORE_ENTRY, the earlier build's two) stay up, and their bursts
 * alternate, round after round: one burst each is too few, as a side's rate moves by a fifth
 * from one burst to the next on this machine. The summary takes the median of the rounds'
 * ratios.
 */
async function history(): Promise<string[]> {
  const receiver = await Receiver.start(0);
  const sides: Side[] = [];
  try {
    const hook = `${receiver.url}/hook`;
    console.log(
      `history: 5000 events to one webhook, on empty tables and beside ${HISTORY_DELIVERIES} ` +
        `historical deliveries, alternating, ${HISTORY_ROUNDS} rounds`,
    );
    const builds: { name: string; entry?: string }[] = [{ name: 'app' }];
    if (BEFORE) builds.push({ name: 'app before', entry: BEFORE });
    const pairs: { name: string; empty: Side; loaded: Side }[] = [];
    for (const { name, entry } of builds) {
      const empty = await deployed([hook], { entry, label: `${name}, defaults, empty tables` });
      sides.push(empty);
      const loaded = await deployed([hook], { entry, label: `${name}, defaults, with history` });
      sides.push(loaded);
      await loadHistory(loaded.database!.url);
      pairs.push({ name, empty, loaded });
    }
    const rate = (f: Figures) => f.deliveries / f.totalS;
    const ratios = new Map<string, number[]>(pairs.map((p) => [p.name, []]));
    for (let round = 1; round <= HISTORY_ROUNDS; round++) {
      console.log(` round ${round}`);
      for (const pair of pairs) {
        const empty = await measure(pair.empty, receiver, scaled(5000), scaled(1000), ['/hook']);
        const loaded = await measure(pair.loaded, receiver, scaled(5000), scaled(1000), ['/hook']);
        ratios.get(pair.name)!.push(rate(loaded) / rate(empty));
      }
    }
    return pairs.map(({ name }) => {
      const each = ratios.get(name)!;
      const median = percentile(each, 0.5);
      if (name === 'app') {
        recordTarget({
          target: `deployed, 5,000-event burst beside ${HISTORY_DELIVERIES.toLocaleString('en')} historical deliveries: ≥ 0.9 of empty tables`,
          figure: `median of ${each.length} rounds`,
          baseline: 'the same burst on empty tables',
          ratio: `${median.toFixed(2)}x`,
          met: median >= 0.9,
        });
      }
      return (
        `history (${name}): with ${HISTORY_DELIVERIES} historical deliveries ÷ empty tables, ` +
        `per round ${each.map((r) => r.toFixed(2)).join(' · ')}, median ${median.toFixed(2)}x ` +
        `(target ≥ 0.9: ${verdict(median >= 0.9)})`
      );
    });
  } finally {
    for (const side of sides) await side.close();
    await receiver.close();
  }
}

async function main(): Promise<void> {
  build(['receiver']);
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(`bench/deployed.ts: load average ${load()} at start, ${new Date().toISOString()}\n`);
  const runs: Record<string, () => Promise<string[]>> = { fast, slow, five, workers, history };
  const summary: string[] = [];
  for (const run of RUNS) summary.push(...(await runs[run]()));
  console.log(`\nsummary\n  ${summary.join('\n  ')}\nload average ${load()} at end`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
