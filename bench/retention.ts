/**
 * The retention job on a table of a million ended deliveries (docs/api.md#receiver-health): rows deleted per
 * second, and the publish → arrival latency of deliveries made while it runs, beside the same
 * deliveries without it (the baseline, measured first in the same run, same app, same rows).
 *
 *   npx ts-node --transpile-only bench/retention.ts [deliveries=1000000] [rate=100]
 */
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { RetentionService } from '../src/retention/retention.service';
import { startReceiver } from '../test/support/receiver';
import { startTestApp } from '../test/support/test-app';
import { createWebhook } from '../test/support/webhooks';
import { latenciesUntil, reportLatencies } from './publish-load';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[deliveries=1000000] [rate=100]');

const DELIVERIES = Math.min(Number(process.argv[2] ?? 1_000_000), 5_000_000);
/** Events published per second by the concurrent delivery load. */
const RATE = Math.min(Number(process.argv[3] ?? 100), 1000);
const PER_EVENT = 10;
const BASELINE_MS = 20_000;

async function main(): Promise<void> {
  // The run at start finds nothing: the old rows are inserted after it.
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn', RETENTION_INTERVAL_MS: '86400000' } });
  const receiver = await startReceiver();
  try {
    const db = t.app.get(DataSource);
    const dispatcher = t.app.get(DispatcherService);
    const route = receiver.route();
    await createWebhook(t, { url: route.url, events: ['job.completed'] });
    const old = await Promise.all(
      Array.from({ length: PER_EVENT }, (_, i) =>
        createWebhook(t, { url: `${route.url}-old-${i}`, events: ['operation.failed'] }),
      ),
    );
    await db.query(`UPDATE webhooks SET active = false WHERE events = '{operation.failed}'`);

    const loadStart = Date.now();
    const events = DELIVERIES / PER_EVENT;
    await db.query(
      `INSERT INTO events (id, kind, data, created_at)
       SELECT gen_random_uuid(), 'operation.failed', '{"error":"x"}',
              now() - interval '40 days' - g * interval '1 ms'
       FROM generate_series(1, $1) g`,
      [events],
    );
    await db.query(
      `INSERT INTO deliveries (webhook_id, event_id, event, body, status, attempt_count,
                               created_at, completed_at, last_status_code)
       SELECT w.id, e.id, e.kind, '{"id":"x","event":"operation.failed","data":{"error":"x"}}',
              'failed', 1, e.created_at, e.created_at, 500
       FROM events e CROSS JOIN unnest($1::uuid[]) AS w(id)
       WHERE e.kind = 'operation.failed'`,
      [old.map((w) => w.id)],
    );
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code,
                                      error, response_body)
       SELECT id, 1, created_at, 12, 500, 'HTTP 500', 'Internal Server Error' FROM deliveries
       WHERE event = 'operation.failed'`,
    );
    await db.query(
      `INSERT INTO inbound_events (event, identity_key, payload, received_at)
       SELECT 'meeting.started', 'bench-' || g, '{"payload":{}}', now() - interval '40 days'
       FROM generate_series(1, $1) g`,
      [events],
    );
    await db.query('VACUUM ANALYZE');
    console.log(
      `loaded ${DELIVERIES} deliveries with as many attempts, ${events} events and ` +
        `${events} inbound events, 40 days old, in ${((Date.now() - loadStart) / 1000).toFixed(0)} s`,
    );

    const deliveriesUntil = (until: Promise<unknown>) =>
      latenciesUntil(dispatcher, receiver, route.path, RATE, until);
    const report = reportLatencies;

    report(
      'without retention',
      await deliveriesUntil(new Promise((resolve) => setTimeout(resolve, BASELINE_MS))),
    );

    const started = Date.now();
    const run = t.app.get(RetentionService).run();
    const during = await deliveriesUntil(run);
    const deleted = (await run)!;
    const seconds = (Date.now() - started) / 1000;
    report('while retention runs', during);
    const rows =
      deleted.deliveries + deleted.deliveryAttempts + deleted.events + deleted.inboundEvents;
    console.log(
      `retention: ${deleted.deliveries} deliveries, ${deleted.deliveryAttempts} attempts, ` +
        `${deleted.events} events, ${deleted.inboundEvents} inbound events = ${rows} rows in ` +
        `${seconds.toFixed(1)} s: ${Math.round(rows / seconds)} rows/s ` +
        `(${Math.round(deleted.deliveries / seconds)} deliveries/s)`,
    );
  } finally {
    await receiver.close();
    await t.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
