import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs one statement as a named prepared statement on the data source's pool: PostgreSQL
 * parses and plans it once per connection instead of on every call. For statements on hot
 * paths (planning a CTE can cost more than running it). A single statement is its own
 * transaction, as with DataSource.query.
 */
export async function preparedQuery<T>(
  db: DataSource,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const pool = (db.driver as PostgresDriver).master as Pool;
  return (await pool.query({ name, text, values })).rows as T[];
}
