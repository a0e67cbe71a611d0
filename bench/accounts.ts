/**
 * Many platform accounts (docs/accounts.md): events of 1,000 installed accounts, each account
 * installed by its own client with one webhook, so every event reaches exactly one of 1,000
 * webhooks, beside the single-account burst of the same run (one installed account, one
 * client's webhook taking every event). Goal: at least 0.9 of the single-account rate
 * (docs/benchmarks.md).
 *
 * Both sides are the app as deployed (compiled, bench/sides.ts, APP_ROLE=all) over the same
 * AUTH_CLIENTS (1,000 clients, each holding only what it installed), with DELIVERY_CONCURRENCY
 * 50 and DELIVERY_CONCURRENCY_PER_WEBHOOK 50 (as bench/pipeline.ts's app side: the single
 * webhook may use every slot). The installations and webhooks are written straight into their
 * tables (the install flow needs a person at the platform). A warm-up burst, then EVENTS signed
 * meeting.started POSTed at CONCURRENCY; deliveries/s = EVENTS ÷ first send → last arrival.
 * Rounds alternate the sides, so a change in the machine's load hits both.
 *
 *   npx ts-node --transpile-only bench/accounts.ts [events=5000] [accounts=1000] [rounds=3]
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import { Pool } from 'undici';
import { meetingStarted } from '../scripts/platform/zoom-events';
import type { AppConfig } from '../src/config/config.types';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { ZOOM_SECRET_TOKEN, deleteRedisKeys } from '../test/support/test-app';
import { createTestDatabase } from '../test/support/test-db';
import { recordTarget, scaled } from './results';
import { ENCRYPTION_KEY, SUBSCRIBER_SECRET, build, spawnDeployed } from './sides';
import { Subscriber } from './subscriber';
import { helpIfAsked, now, stopChild, zoomHeaders } from './support';

helpIfAsked(__filename, '[events=5000] [accounts=1000] [rounds=3]');

const EVENTS = Math.min(Number(process.argv[2] ?? 5000), 100_000);
const ACCOUNTS = Math.min(Math.max(Number(process.argv[3] ?? 1000), 1), 10_000);
const ROUNDS = Math.min(Math.max(Number(process.argv[4] ?? 3), 1), 9);
const WARMUP = scaled(1000);
const CONCURRENCY = 50;
const RECEIVERS = 4;
const GOAL = 0.9;
const ARRIVAL_TIMEOUT_MS = 300_000;

const pad = (i: number) => String(i).padStart(5, '0');
const clientOf = (i: number) => `tenant-${pad(i)}`;
const accountOf = (i: number) => `acct-${pad(i)}`;
/** Every client holds only the accounts it installed (`accounts: []`). */
const CLIENT_LIST = Array.from({ length: ACCOUNTS }, (_, i) => ({
  client_id: clientOf(i),
  client_secret: `secret-${pad(i)}-0123456789`,
  scopes: 'webhooks:read',
  accounts: [],
}));

/** The path of account `i`'s webhook, on receiver i % RECEIVERS. */
const hookOf = (receivers: Subscriber, i: number) => ({
  path: `/tenant/${i}`,
  url: `${receivers.urls[i % RECEIVERS]}/tenant/${i}`,
});

interface Sent {
  uuid: string;
  path: string;
  sentAt: number;
}

/** `count` meeting.started events, event k of account `accountIndex(k)`, CONCURRENCY at a time. */
async function burst(
  pool: Pool,
  receivers: Subscriber,
  tag: string,
  count: number,
  accountIndex: (k: number) => number,
): Promise<Sent[]> {
  const sent: Sent[] = [];
  const nonce = randomBytes(6).toString('base64url');
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const k = next++;
        const i = accountIndex(k);
        const uuid = `${tag}-${nonce}-${k}`;
        const event = meetingStarted(uuid, Date.now());
        event.payload.account_id = accountOf(i);
        const body = JSON.stringify(event);
        const sentAt = now();
        const res = await pool.request({
          path: '/zoom/events',
          method: 'POST',
          headers: zoomHeaders(body, ZOOM_SECRET_TOKEN),
          body,
        });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`POST /zoom/events answered ${res.statusCode}`);
        sent.push({ uuid, path: hookOf(receivers, i).path, sentAt });
      }
    }),
  );
  return sent;
}

/**
 * One side: `installed` accounts installed, each by its client with one webhook; events spread
 * over them round-robin. Resolves to deliveries/s of the measured burst.
 */
async function side(receivers: Subscriber, installed: number): Promise<number> {
  const database = await createTestDatabase();
  const prefix = `mebbench:accounts:${randomBytes(4).toString('hex')}`;
  const { child, url } = await spawnDeployed(database.url, prefix, {
    LOG_LEVEL: 'warn',
    AUTH_CLIENTS: JSON.stringify(CLIENT_LIST),
    DELIVERY_CONCURRENCY: '50',
    DELIVERY_CONCURRENCY_PER_WEBHOOK: '50',
    RECONCILE_INTERVAL_MS: '0',
  });
  const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
  try {
    const cipher = new SecretCipherService({ secretsEncryptionKey: ENCRYPTION_KEY } as AppConfig);
    const db = new Client({ connectionString: database.url });
    await db.connect();
    const indexes = Array.from({ length: installed }, (_, i) => i);
    await db.query(
      `INSERT INTO installations (account_id, installed_by, status)
       SELECT a, c, 'active' FROM unnest($1::text[], $2::text[]) AS x(a, c)`,
      [indexes.map(accountOf), indexes.map(clientOf)],
    );
    await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       SELECT c, u, ARRAY['job.started'], $3, '0123' FROM unnest($1::text[], $2::text[]) AS x(c, u)`,
      [
        indexes.map(clientOf),
        indexes.map((i) => hookOf(receivers, i).url),
        cipher.encrypt(SUBSCRIBER_SECRET),
      ],
    );
    await db.query('ANALYZE webhooks; ANALYZE installations');
    await db.end();

    const spread = (k: number) => k % installed;
    const warm = await burst(pool, receivers, 'warm', WARMUP, spread);
    await receivers.waitFor(
      warm.map((s) => `${s.uuid} ${s.path}`),
      'warm-up',
      ARRIVAL_TIMEOUT_MS,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const start = now();
    const sent = await burst(pool, receivers, 'burst', EVENTS, spread);
    const answered = now();
    await receivers.waitFor(
      sent.map((s) => `${s.uuid} ${s.path}`),
      'burst',
      ARRIVAL_TIMEOUT_MS,
    );
    const last = Math.max(...sent.map((s) => receivers.arrivals.get(`${s.uuid} ${s.path}`)!));
    // Where the time goes: the POSTs all answered (the ingest, fan-out included), then the rest.
    console.log(
      `    ${installed} account(s): answered 200/s ${(EVENTS / ((answered - start) / 1000)).toFixed(0)}, ` +
        `last arrival ${((last - answered) / 1000).toFixed(1)} s after the last answer`,
    );
    return EVENTS / ((last - start) / 1000);
  } finally {
    await pool.close();
    await stopChild(child);
    await database.drop();
    await deleteRedisKeys(prefix);
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function main(): Promise<void> {
  build();
  console.log(
    `bench/accounts.ts: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start, ${new Date().toISOString()}\n` +
      `${EVENTS} events at concurrency ${CONCURRENCY} after ${WARMUP} warm-up events, ` +
      `${ROUNDS} rounds; DELIVERY_CONCURRENCY 50, DELIVERY_CONCURRENCY_PER_WEBHOOK 50`,
  );
  const receivers = new Subscriber();
  await receivers.start(RECEIVERS);
  const single: number[] = [];
  const many: number[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      single.push(await side(receivers, 1));
      many.push(await side(receivers, ACCOUNTS));
      console.log(
        `  round ${round}: one account ${single[round - 1].toFixed(0)} deliveries/s, ` +
          `${ACCOUNTS} accounts to ${ACCOUNTS} clients' webhooks ` +
          `${many[round - 1].toFixed(0)} deliveries/s ` +
          `(${(many[round - 1] / single[round - 1]).toFixed(2)}x)`,
      );
    }
  } finally {
    receivers.close();
  }
  const ratios = many.map((m, i) => m / single[i]);
  const ratio = median(ratios);
  console.log(
    `median: one account ${median(single).toFixed(0)} deliveries/s, ${ACCOUNTS} accounts ` +
      `${median(many).toFixed(0)} deliveries/s; ratio per round ` +
      `${ratios.map((r) => r.toFixed(2)).join(', ')}, median ${ratio.toFixed(2)}x ` +
      `(goal at least ${GOAL})`,
  );
  recordTarget({
    target: `events of ${ACCOUNTS} installed accounts to ${ACCOUNTS} clients' webhooks`,
    figure: `${median(many).toFixed(0)} deliveries/s`,
    baseline: `single account ${median(single).toFixed(0)} deliveries/s`,
    ratio: `${ratio.toFixed(2)}x`,
    met: ratio >= GOAL,
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
