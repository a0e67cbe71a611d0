/**
 * How long migration HistoryPartitions1768000000000 (docs/operations.md#moving-an-existing-install)
 * holds the history tables on an existing install: a database at the previous migration with
 * `deliveries` ended deliveries (ten webhooks per event, an attempt each) and as many inbound
 * events as events over 30 days, then the migration and its down(), each timed.
 *
 *   npx ts-node --transpile-only bench/partition-migration.ts [deliveries=1000000]
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../src/database/migrations';
import { createTestDatabase } from '../test/support/test-db';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[deliveries=1000000]');

const DELIVERIES = Number(process.argv[2] ?? 1_000_000);
const EVENTS = Math.ceil(DELIVERIES / 10);

async function main(): Promise<void> {
  const database = await createTestDatabase();
  const source = (migrations: typeof MIGRATIONS) =>
    new DataSource({
      type: 'postgres',
      url: database.url,
      migrations,
      migrationsTransactionMode: 'each',
      logging: false,
    });
  try {
    const before = source(MIGRATIONS.slice(0, -1));
    await before.initialize();
    await before.runMigrations({ transaction: 'each' });
    const loadStart = Date.now();
    await before.query(
      `INSERT INTO webhooks (url, events, secret_encrypted, secret_hint, owner_client_id, active)
       SELECT 'https://example.com/hook-' || g, '{job.started}', 'x', 'x', 'ops', false
       FROM generate_series(1, 10) g`,
    );
    await before.query(
      `INSERT INTO events (id, kind, data, created_at, body)
       SELECT uuid_v7(), 'job.started', '{}', now() - (g % 30) * interval '1 day' - g * interval '1 ms', '{}'
       FROM generate_series(1, $1) g`,
      [EVENTS],
    );
    await before.query(
      `INSERT INTO deliveries (webhook_id, event_id, event, status, attempt_count, created_at,
                               completed_at)
       SELECT w.id, e.id, e.kind, 'succeeded', 1, e.created_at, e.created_at
       FROM events e CROSS JOIN webhooks w`,
    );
    await before.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
       SELECT id, 1, created_at, 5, 200 FROM deliveries`,
    );
    await before.query(
      `INSERT INTO inbound_events (event, identity_key, payload, received_at)
       SELECT 'meeting.started', 'bench-' || g, '{"payload":{}}', now() - (g % 30) * interval '1 day'
       FROM generate_series(1, $1) g`,
      [EVENTS],
    );
    await before.query('VACUUM ANALYZE');
    await before.destroy();
    console.log(
      `loaded ${EVENTS * 10} deliveries with as many attempts, ${EVENTS} events and ${EVENTS} ` +
        `inbound events in ${((Date.now() - loadStart) / 1000).toFixed(0)} s`,
    );

    const all = source(MIGRATIONS);
    await all.initialize();
    try {
      const up = Date.now();
      await all.runMigrations({ transaction: 'each' });
      console.log(`migration (tables locked throughout): ${Date.now() - up} ms`);
      const down = Date.now();
      await all.undoLastMigration({ transaction: 'each' });
      console.log(`its down(): ${Date.now() - down} ms`);
    } finally {
      await all.destroy();
    }
  } finally {
    await database.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
