import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';

export const ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database per test file, so runs never see each other's rows. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `meb_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs one query against a test database (for assertions on what was stored). */
export async function queryDatabase<T = Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A data source on `url` with `migrations` run, each in its own transaction as the service runs
 * them: a database as an earlier version left it, for a migration's own spec.
 */
export async function migratedDataSource(
  url: string,
  migrations: DataSourceOptions['migrations'],
): Promise<DataSource> {
  const db = new DataSource({
    type: 'postgres',
    url,
    migrations,
    migrationsTransactionMode: 'each',
    logging: false,
  });
  await db.initialize();
  await db.runMigrations({ transaction: 'each' });
  return db;
}
