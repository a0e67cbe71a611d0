import type { Pool } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/** The pool TypeORM holds; raw statements go to it directly, with no wrapper around results. */
function poolOf(db: DataSource): Pool {
  return (db.driver as PostgresDriver).master as Pool;
}

/**
 * Runs one statement and returns its rows typed as `Row`: the store that owns the SQL
 * declares the row it selects (column names as PostgreSQL returns them) and maps it to its
 * domain type. The driver cannot know a row's shape, so this is the one place that states it.
 * Unlike DataSource.query, an UPDATE or DELETE with RETURNING yields its rows, not
 * [rows, count]. A single statement is its own transaction.
 */
export async function query<Row>(
  db: DataSource | QueryRunner,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  // A query runner holds one connection (a transaction, a transaction-scoped lock): the
  // statement must run on it, not on any pooled connection.
  if (!(db instanceof DataSource)) return (await db.query(text, values, true)).records as Row[];
  return (await poolOf(db).query({ text, values })).rows as Row[];
}

/**
 * query() as a named prepared statement: PostgreSQL parses and plans it once per connection
 * instead of on every call. For statements on hot paths (planning a CTE can cost more than
 * running it).
 */
export async function preparedQuery<Row>(
  db: DataSource,
  name: string,
  text: string,
  values: unknown[],
): Promise<Row[]> {
  return (await poolOf(db).query({ name, text, values })).rows as Row[];
}

/**
 * query() with each row as an array of its columns, in the statement's order: for reads of
 * many rows, where an object per row is the larger part of the cost.
 */
export async function queryArrays(
  db: DataSource,
  text: string,
  values: unknown[],
): Promise<unknown[][]> {
  return (await poolOf(db).query({ text, values, rowMode: 'array' })).rows as unknown[][];
}
