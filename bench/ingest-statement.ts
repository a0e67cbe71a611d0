/**
 * The ingest statement alone on PostgreSQL: what one batch of platform events costs the
 * database, through the app's own store (PgInboundEventStore: its serialisation, its statement),
 * beside the statements of bench/minimal-pipeline.ts in the same run: the minimal durable
 * ingest's (one INSERT of the inbound row) and the minimal durable pipeline's (the inbound row
 * and its delivery row, with the notification body; bench/minimal-sql.ts). One client, one batch
 * at a time, so nothing else competes: wall time per statement and the backend's CPU per event
 * (from /proc, 10 ms ticks).
 *
 *   npx ts-node --transpile-only bench/ingest-statement.ts [batch=15] [statements=300]
 *
 * BENCH_DDL='<statements>;...' runs DDL on the app's database first (e.g. to weigh an index or
 * a foreign key: `DROP INDEX events_created_idx`), to see what a schema change would save.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../src/config/config.types';
import { MIGRATIONS } from '../src/database/migrations';
import { InboundEventEntity } from '../src/inbound/inbound-event.entity';
import { NewInboundEvent, PgInboundEventStore } from '../src/inbound/inbound-event.store';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { CLIENTS } from '../test/support/test-app';
import { createTestDatabase } from '../test/support/test-db';
import { INGEST_AND_DELIVERY_SQL, INGEST_SQL, SCHEMA } from './minimal-sql';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[batch=15] [statements=300]');

const BATCH = Math.min(Number(process.argv[2] ?? 15), 100);
const STATEMENTS = Math.min(Number(process.argv[3] ?? 300), 10_000);
const WARMUP = 60;

/** A meeting.started as the endpoint hands it to the store (plan: publish job.started). */
function event(): NewInboundEvent {
  const body = Buffer.from(JSON.stringify(meetingStarted(randomUUID())));
  const envelope = JSON.parse(body.toString()) as {
    event_ts: number;
    payload: { account_id: string; object: Record<string, unknown> };
  };
  const object = envelope.payload.object;
  return {
    id: randomUUID(),
    event: 'meeting.started',
    identityKey: `meeting.started:${randomUUID()}`,
    eventTs: envelope.event_ts,
    accountId: envelope.payload.account_id,
    payload: body,
    trackingId: null,
    downloadTokenEncrypted: null,
    plan: {
      then: 'publish',
      event: {
        id: randomUUID(),
        kind: 'job.started',
        createdAt: new Date(),
        data: { meeting_id: object.id, uuid: object.uuid, topic: object.topic },
        source: {
          platform: 'zoom',
          event: 'meeting.started',
          event_ts: envelope.event_ts,
          account_id: envelope.payload.account_id,
          tracking_id: null,
          via: 'webhook',
        },
      },
    },
    leaseMs: null,
    via: 'webhook',
  };
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Runs `batch` STATEMENTS times on one connection; wall ms per statement, CPU µs per event. */
async function measure(db: DataSource, batch: () => Promise<unknown>) {
  for (let i = 0; i < WARMUP; i++) await batch();
  const [{ pid }] = (await db.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[];
  const ticks = cpuTicks(pid);
  const start = process.hrtime.bigint();
  for (let i = 0; i < STATEMENTS; i++) await batch();
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const cpuMs = (cpuTicks(pid) - ticks) * 10;
  return {
    msPerStatement: wallMs / STATEMENTS,
    cpuUsPerEvent: (1000 * cpuMs) / (STATEMENTS * BATCH),
  };
}

async function main(): Promise<void> {
  const appDb = await createTestDatabase();
  const minimalDb = await createTestDatabase();
  // One connection each, so the statements run on one backend whose CPU is read.
  const app = new DataSource({
    type: 'postgres',
    url: appDb.url,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    entities: [InboundEventEntity],
    extra: { max: 1 },
  });
  const minimal = new DataSource({ type: 'postgres', url: minimalDb.url, extra: { max: 1 } });
  try {
    await app.initialize();
    await app.runMigrations();
    await app.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       VALUES ($1, 'http://127.0.0.1:1/hook', ARRAY['job.started'], 'x', '0123')`,
      [CLIENTS.alpha.client_id],
    );
    for (const ddl of (process.env.BENCH_DDL ?? '').split(';').filter((s) => s.trim())) {
      await app.query(ddl);
    }
    // The client holds every platform account, as AUTH_CLIENTS' `accounts: "*"` (docs/accounts.md).
    const config = {
      auth: { clients: [{ clientId: CLIENTS.alpha.client_id, accounts: '*' }] },
    } as AppConfig;
    const store = new PgInboundEventStore(app, app.getRepository(InboundEventEntity), config);
    // Submitted in one turn, a batch shares one statement (the store's micro-batcher).
    const appSide = await measure(app, () =>
      Promise.all(Array.from({ length: BATCH }, () => store.insert(event()))),
    );

    await minimal.initialize();
    await minimal.query(SCHEMA);
    const minimalBatch = (sql: string, withBody: boolean) => () => {
      const rows = Array.from({ length: BATCH }, () =>
        JSON.stringify(meetingStarted(randomUUID())),
      );
      const params = [
        rows.map(() => `meeting.started:${randomUUID()}`),
        rows.map(() => 'meeting.started'),
        rows,
      ];
      if (withBody) params.push(rows.map((row) => JSON.stringify({ id: randomUUID(), row })));
      return minimal.query(sql, params);
    };
    const minimalSide = await measure(minimal, minimalBatch(INGEST_SQL, false));
    const durableSide = await measure(minimal, minimalBatch(INGEST_AND_DELIVERY_SQL, true));

    const line = (label: string, r: typeof appSide) =>
      `  ${label.padEnd(44)} ${r.msPerStatement.toFixed(3)} ms per statement, ` +
      `PostgreSQL CPU ${r.cpuUsPerEvent.toFixed(1)} µs per event`;
    console.log(`${STATEMENTS} statements of ${BATCH} events, one at a time`);
    if (process.env.BENCH_DDL) console.log(`  (app database after: ${process.env.BENCH_DDL})`);
    console.log(line('app (inbound, event and delivery rows)', appSide));
    console.log(line('minimal durable ingest (inbound row)', minimalSide));
    console.log(line('minimal durable pipeline (inbound, delivery)', durableSide));
    const ratio = (r: typeof appSide) => (appSide.cpuUsPerEvent / r.cpuUsPerEvent).toFixed(2);
    console.log(
      `  app's CPU per event: ${ratio(minimalSide)}x the minimal ingest's, ` +
        `${ratio(durableSide)}x the durable pipeline's`,
    );
  } finally {
    await Promise.allSettled([app.destroy(), minimal.destroy()]);
    await Promise.allSettled([appDb.drop(), minimalDb.drop()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
