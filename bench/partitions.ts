/**
 * Time-partitioned history (docs/operations.md#partitions): bursts of published events on
 * empty tables (the baseline: a second app on a database of its own, same run) alternating
 * with the same bursts on an app holding `deliveries` historical deliveries (their events, an
 * attempt each, and inbound events) spread over 30 days of partitions; then the drop of the
 * oldest day, with the publish → arrival latency of a load running while it drops.
 *
 *   npx ts-node --transpile-only bench/partitions.ts [deliveries=20000000] [events=5000] [rate=100]
 *
 * 20 million rows take a long time to generate on a small machine: a smaller count shows the
 * same shape (the drop's cost does not grow with the other days' rows).
 */
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { RetentionStore } from '../src/retention/retention.store';
import { startReceiver } from '../test/support/receiver';
import { startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { createWebhook } from '../test/support/webhooks';
import { latenciesUntil, reportLatencies } from './publish-load';
import { recordTarget } from './results';
import { helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[deliveries=20000000] [events=5000] [rate=100]');

const DELIVERIES = Number(process.argv[2] ?? 20_000_000);
const EVENTS = Number(process.argv[3] ?? 5000);
const RATE = Math.min(Number(process.argv[4] ?? 100), 1000);
const PER_EVENT = 10;
const DAYS = 30;
const CONCURRENCY = 50;
const ROUNDS = 3;
const DAY_MS = 86_400_000;

/** One app with its receiver and a webhook of its own: the bursts go to it. */
async function side() {
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn', RETENTION_INTERVAL_MS: '86400000' } });
  const receiver = await startReceiver();
  const route = receiver.route();
  await createWebhook(t, { url: route.url, events: ['job.completed'] });
  const dispatcher = t.app.get(DispatcherService);
  /** Publishes `count` events, CONCURRENCY at a time; resolves to events/s until all arrived. */
  const burst = async (count: number): Promise<number> => {
    const startIndex = receiver.requests(route.path).length;
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < count) {
          next++;
          await dispatcher.publish({ kind: 'job.completed', data: { n: next } });
        }
      }),
    );
    await waitFor(() => receiver.requests(route.path).length - startIndex >= count, {
      timeoutMs: 300_000,
      what: 'every delivery of the burst',
    });
    return count / ((Date.now() - started) / 1000);
  };
  return { t, receiver, route, dispatcher, burst };
}

async function main(): Promise<void> {
  // Two apps, two databases: one stays empty (the baseline), the other holds the history; their
  // bursts alternate, so that a machine whose load changes weighs on both alike.
  const empty = await side();
  const history = await side();
  try {
    const { t, receiver, route, dispatcher } = history;
    const db = t.app.get(DataSource);
    await empty.burst(500); // warm-up, not counted
    await history.burst(500);

    const old = await Promise.all(
      Array.from({ length: PER_EVENT }, (_, i) =>
        createWebhook(t, { url: `${route.url}-old-${i}`, events: ['operation.failed'] }),
      ),
    );
    await db.query(`UPDATE webhooks SET active = false WHERE events = '{operation.failed}'`);
    const loadStart = Date.now();
    const perDay = Math.ceil(DELIVERIES / PER_EVENT / DAYS);
    const loaded = perDay * PER_EVENT * DAYS;
    for (let day = 1; day <= DAYS; day++) {
      // Each day's rows within its own partition (midnight UTC + 1 h ... + 23 h).
      const base = `date_trunc('day', now(), 'UTC') - interval '${day} days'`;
      await db.query(
        `INSERT INTO events (id, kind, data, created_at)
         SELECT uuid_v7(), 'operation.failed', '{"error":"x"}',
                ${base} + interval '1 hour' + g * interval '79 ms'
         FROM generate_series(1, $1) g`,
        [perDay],
      );
      await db.query(
        `INSERT INTO deliveries (webhook_id, event_id, event, status, attempt_count, created_at,
                                 completed_at, last_status_code)
         SELECT w.id, e.id, e.kind, 'failed', 1, e.created_at, e.created_at, 500
         FROM events e CROSS JOIN unnest($1::uuid[]) AS w(id)
         WHERE e.kind = 'operation.failed' AND e.created_at >= ${base}
           AND e.created_at < ${base} + interval '1 day'`,
        [old.map((w) => w.id)],
      );
      await db.query(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms,
                                        status_code, error)
         SELECT id, 1, created_at, 12, 500, 'HTTP 500' FROM deliveries
         WHERE event = 'operation.failed' AND created_at >= ${base}
           AND created_at < ${base} + interval '1 day'`,
      );
      await db.query(
        `INSERT INTO inbound_events (event, identity_key, payload, received_at)
         SELECT 'meeting.started', 'bench-${day}-' || g, '{"payload":{}}',
                ${base} + interval '1 hour' + g * interval '79 ms'
         FROM generate_series(1, $1) g`,
        [perDay],
      );
    }
    await db.query('VACUUM ANALYZE');
    console.log(
      `loaded ${loaded} deliveries with as many attempts, ` +
        `${perDay * DAYS} events and as many inbound events over ${DAYS} days in ` +
        `${((Date.now() - loadStart) / 1000).toFixed(0)} s`,
    );

    const rates: { empty: number; full: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rates.push({ empty: await empty.burst(EVENTS), full: await history.burst(EVENTS) });
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
      target: `${EVENTS} events published on ${loaded} historical deliveries in ${DAYS} days of partitions`,
      figure: `${(sum('full') / ROUNDS).toFixed(0)} events/s (mean of ${ROUNDS} rounds)`,
      baseline: `empty tables ${(sum('empty') / ROUNDS).toFixed(0)} events/s`,
      ratio: `${ratio.toFixed(2)}x`,
      met: ratio >= 0.9,
    });

    const loadUntil = (until: Promise<unknown>) =>
      latenciesUntil(dispatcher, receiver, route.path, RATE, until);
    const report = reportLatencies;

    const before = await loadUntil(new Promise((resolve) => setTimeout(resolve, 10_000)));
    report('without retention', before);
    // The cutoff that expires exactly the oldest day of the history: the end of that day.
    const oldestEnd = Math.floor(Date.now() / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
    const store = t.app.get(RetentionStore, { strict: false });
    const started = Date.now();
    // The load starts a second before, so that the drop happens under it.
    const drop = new Promise((resolve) => setTimeout(resolve, 1000)).then(async () => {
      const at = Date.now();
      const dropped = await store.dropPartitions(new Date(oldestEnd));
      return { dropped, ms: Date.now() - at };
    });
    const during = await loadUntil(drop.then(() => new Promise((r) => setTimeout(r, 1000))));
    const { dropped, ms } = await drop;
    report('while a day is dropped', during);
    console.log(
      `dropped one day: ${dropped.deliveries} deliveries, ${dropped.deliveryAttempts} attempts, ` +
        `${dropped.events} events, ${dropped.inboundEvents} inbound events in ${ms} ms ` +
        `(target < 1000 ms: ${ms < 1000 ? 'met' : 'MISSED'}; ingest p99 target < 1000 ms: ` +
        `${percentile(during, 0.99) < 1000 ? 'met' : 'MISSED'}); ${Date.now() - started} ms with the load`,
    );
    recordTarget({
      target: `drop of one day's partitions (four tables) beside ${loaded} historical deliveries`,
      figure: `${ms} ms`,
      baseline: 'bound: under 1000 ms',
      ratio: '-',
      met: ms < 1000,
    });
    recordTarget({
      target: `publish → arrival p99 at ${RATE} events/s while a day is dropped`,
      figure: `${percentile(during, 0.99)} ms`,
      baseline: `${percentile(before, 0.99)} ms just before; bound: under 1000 ms`,
      ratio: '-',
      met: percentile(during, 0.99) < 1000,
    });
  } finally {
    for (const s of [empty, history]) {
      await s.receiver.close();
      await s.t.close();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
