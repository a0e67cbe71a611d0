/**
 * What ordered delivery per meeting (docs/receiving.md#ordered-delivery-per-meeting) costs: deliveries/s to a webhook with
 * `ordering: "meeting"` beside the same webhook unordered, in the same run, with the backlog's
 * events spread over 1, 10 and 1,000 keys (meetings). One process of role all (it publishes
 * and sends), a local receiver answering 200 at once; each phase publishes N events of its
 * keys, each key's in event_ts order, through DispatcherService.publish, and counts from the
 * first publish to the last delivery received. Phases alternate (unordered, ordered) per key
 * count, each to a fresh webhook, the others switched off, after a warm-up round not counted.
 *
 *   npx ts-node --transpile-only bench/ordering.ts [events=2000] [rounds=1]
 *
 * The machine may be shared: the load average is printed before and after.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { startReceiver } from '../test/support/receiver';
import { startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { createWebhook } from '../test/support/webhooks';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[events=2000] [rounds=1]');

const EVENTS = Math.min(Number(process.argv[2] ?? 2000), 20_000);
const ROUNDS = Math.min(Number(process.argv[3] ?? 1), 5);
const KEYS = [1, 10, 1000];
const PUBLISHERS = 16;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  console.log(`load average before: ${load()}`);
  const [t, receiver] = await Promise.all([
    startTestApp({ env: { LOG_LEVEL: 'warn', DELIVERY_TIMEOUT_MS: '10000' } }),
    startReceiver(),
  ]);
  const dispatcher = t.app.get(DispatcherService);
  const db = t.app.get(DataSource);
  const results: { keys: number; ordering: string; perSecond: number }[] = [];
  try {
    // Round 0 warms up (JIT, connection pools, prepared statements) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      for (const keys of round === 0 ? [10] : KEYS) {
        for (const ordering of ['none', 'meeting'] as const) {
          await db.query(`UPDATE webhooks SET active = false`);
          const route = receiver.route({}, `${ordering}-${keys}`);
          await createWebhook(t, { url: route.url, events: ['job.started'], ordering });
          const uuids = Array.from({ length: keys }, () => randomBytes(9).toString('base64'));
          const base = Date.now();
          const started = Date.now();
          let next = 0;
          // Event i is key i % keys, its n-th (i / keys): a key's events go out in order.
          await Promise.all(
            Array.from({ length: PUBLISHERS }, async () => {
              for (let i = next++; i < EVENTS; i = next++) {
                const uuid = uuids[i % keys];
                await dispatcher.publish({
                  kind: 'job.started',
                  data: { uuid, n: i },
                  source: {
                    platform: 'zoom',
                    event: 'meeting.started',
                    event_ts: base + i,
                    account_id: 'bench',
                    tracking_id: null,
                    via: 'webhook',
                  },
                  orderKey: uuid,
                });
              }
            }),
          );
          await waitFor(() => receiver.requests(route.path).length >= EVENTS, {
            timeoutMs: 600_000,
            intervalMs: 20,
            what: `${EVENTS} deliveries (${ordering}, ${keys} keys)`,
          });
          const last = Math.max(...receiver.requests(route.path).map((r) => r.receivedAt));
          const perSecond = EVENTS / ((last - started) / 1000);
          if (round === 0) continue;
          results.push({ keys, ordering, perSecond });
          console.log(
            `round ${round}  keys ${String(keys).padStart(4)}  ordering ${ordering.padEnd(7)}  ` +
              `${perSecond.toFixed(0).padStart(6)} deliveries/s`,
          );
        }
      }
    }
  } finally {
    await Promise.all([receiver.close().catch(() => undefined), t.close()]);
  }
  console.log('\nmedian over rounds: ordered vs unordered (same run)');
  for (const keys of KEYS) {
    const median = (ordering: string) => {
      const list = results
        .filter((r) => r.keys === keys && r.ordering === ordering)
        .map((r) => r.perSecond)
        .sort((a, b) => a - b);
      return list[Math.floor(list.length / 2)];
    };
    const [none, meeting] = [median('none'), median('meeting')];
    console.log(
      `keys ${String(keys).padStart(4)}: unordered ${none.toFixed(0)}/s, ordered ` +
        `${meeting.toFixed(0)}/s (${(meeting / none).toFixed(2)}x)`,
    );
  }
  console.log(`load average after: ${load()}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
