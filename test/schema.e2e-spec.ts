import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { cliDataSourceOptions } from '../src/database/data-source-options';
import { MIGRATIONS } from '../src/database/migrations';
import { newRowId } from '../src/database/row-id';
import { TestDatabase, createTestDatabase, queryDatabase } from './support/test-db';
import { TestApp, startTestApp } from './support/test-app';

const ROOT = join(__dirname, '..');
const MIGRATIONS_DIR = join(ROOT, 'src', 'database', 'migrations');
const ENTITY_TABLES = [
  'deliveries',
  'delivery_attempts',
  'events',
  'inbound_events',
  'inbound_gaps',
  'reconciliation_runs',
  'recording_downloads',
  'webhooks',
];
/**
 * Tables of SQL alone, with no entity: inbound_socket_state is one row the socket's store writes
 * in SQL; webhook_filters is written by a trigger on webhooks; attendance by a trigger on
 * inbound_events and by the attendance store's SQL.
 */
const SQL_TABLES = [
  // The platform accounts' tables, written in SQL by src/accounts/installation.store.ts.
  'account_purges',
  'attendance',
  // The dedupe and idempotency keys of the partitioned history (docs/operations.md#partitions).
  'event_keys',
  'inbound_event_keys',
  'inbound_socket_state',
  'install_states',
  'installations',
  'webhook_filters',
];

/** Tables in the public schema of a database, sorted; partitions aside (their parents count). */
const tablesOf = async (url: string): Promise<string[]> =>
  (
    await queryDatabase<{ table_name: string }>(
      url,
      `SELECT table_name FROM information_schema.tables t
       WHERE table_schema = 'public' AND NOT EXISTS (
         SELECT 1 FROM pg_class c WHERE c.oid = format('%I.%I', t.table_schema, t.table_name)::regclass
           AND c.relispartition)
       ORDER BY 1`,
    )
  ).map((r) => r.table_name);

/**
 * Runs one of the package's npm scripts as a developer or a deploy Job would, with only the
 * given variables (so nothing from the test runner's environment decides the outcome).
 */
async function npmRun(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}

describe('database schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('matches every entity exactly after the migrations, so migration:generate finds nothing', async () => {
    // The CLI's data source (every *.entity file), not only the entities the app registered.
    const cli = new DataSource({ ...cliDataSourceOptions(t.config), migrationsRun: false });
    await cli.initialize();
    try {
      expect(cli.entityMetadatas.map((m) => m.tableName).sort()).toEqual(ENTITY_TABLES);
      const sqlInMemory = await cli.driver.createSchemaBuilder().log();
      expect(sqlInMemory.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await cli.destroy();
    }
  });

  it('gives inbound events, events and deliveries time-ordered ids (UUIDv7), in SQL as in the app', async () => {
    const before = Date.now();
    const rows = await queryDatabase<{ id: string }>(
      t.database.url,
      `SELECT uuid_v7()::text AS id FROM generate_series(1, 3)`,
    );
    const ids = [...rows.map((r) => r.id), newRowId()];
    const after = Date.now();
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before - 1000);
      expect(ms).toBeLessThanOrEqual(after + 1000);
    }
    const defaults = await queryDatabase<{ table_name: string; column_default: string }>(
      t.database.url,
      `SELECT table_name, column_default FROM information_schema.columns
       WHERE column_name = 'id' AND table_name IN ('inbound_events', 'events', 'deliveries')
       ORDER BY table_name`,
    );
    expect(defaults).toEqual(
      ['deliveries', 'events', 'inbound_events'].map((table_name) => ({
        table_name,
        column_default: 'uuid_v7()',
      })),
    );
  });

  it('can revert every migration and apply them again', async () => {
    const ds = t.app.get(DataSource);
    const count = ds.migrations.length;
    for (let i = 0; i < count; i++) await ds.undoLastMigration({ transaction: 'each' });
    const left = await ds.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'migrations'`,
    );
    expect(left[0].n).toBe(0);
    expect(await ds.runMigrations({ transaction: 'each' })).toHaveLength(count);
  });
});

describe('DATABASE_MIGRATIONS_RUN=false', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('starts on a fresh database and leaves it unmigrated; the same database migrates with true', async () => {
    const off = await startTestApp({ database: db, env: { DATABASE_MIGRATIONS_RUN: 'false' } });
    try {
      expect((await fetch(`${off.baseUrl}/health/live`)).status).toBe(200);
      // No webhooks table, and no migrations table (so no migrations rows) either.
      expect(await tablesOf(db.url)).toEqual([]);
    } finally {
      await off.close();
    }
    // The check above is not vacuous: this database is one the app would migrate.
    const on = await startTestApp({ database: db });
    try {
      expect(await tablesOf(db.url)).toEqual(
        [...ENTITY_TABLES, ...SQL_TABLES, 'migrations'].sort(),
      );
    } finally {
      await on.close();
    }
  });
});

describe('migration npm scripts (TypeORM CLI over src/database/data-source.ts)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  const filesBefore = readdirSync(MIGRATIONS_DIR).sort();
  const checkSchema = () =>
    npmRun('migration:generate', ['src/database/migrations/Check', '--dryrun', '--check'], {
      DATABASE_URL: db.url,
    });

  it('migration:generate --check reports changes on the unmigrated database', async () => {
    const { code, output } = await checkSchema();
    expect(output).toContain('Unexpected changes in database schema were found');
    expect(output).toContain('CREATE TABLE "webhooks"');
    expect(code).toBe(1);
  }, 120000);

  it('migration:run applies every migration to the DATABASE_URL database', async () => {
    const { code, output } = await npmRun('migration:run', [], { DATABASE_URL: db.url });
    expect({ code, tail: output.slice(-2000) }).toEqual({ code: 0, tail: expect.any(String) });
    expect(await tablesOf(db.url)).toEqual([...ENTITY_TABLES, ...SQL_TABLES, 'migrations'].sort());
    const applied = await queryDatabase<{ name: string }>(
      db.url,
      'SELECT name FROM migrations ORDER BY id',
    );
    expect(applied.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
  }, 120000);

  it('migration:generate --dryrun --check then finds no changes, and writes no file', async () => {
    const { code, output } = await checkSchema();
    expect(output).toContain('No changes in database schema were found');
    expect(code).toBe(0);
    expect(readdirSync(MIGRATIONS_DIR).sort()).toEqual(filesBefore);
  }, 120000);

  it('reads its configuration through src/config: a bad DATABASE_URL is refused by name', async () => {
    const { code, output } = await npmRun('migration:run', [], { DATABASE_URL: 'nonsense' });
    expect(code).not.toBe(0);
    expect(output).toMatch(/- DATABASE_URL must be a postgres: or postgresql: URL/);
  }, 120000);
});
