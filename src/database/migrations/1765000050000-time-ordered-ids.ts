import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Time-ordered (UUIDv7) ids for the rows that grow without bound, made in SQL for the rows the
 * fan-out statements insert (why: src/database/row-id.ts). PostgreSQL 15 has no uuidv7(): this
 * one takes a random v4 and writes the Unix time in milliseconds over its first 48 bits and
 * 7 over its version nibble (RFC 9562's layout). Existing rows keep their ids.
 */
export class TimeOrderedIds1765000050000 implements MigrationInterface {
  name = 'TimeOrderedIds1765000050000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
        SELECT encode(
          set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
          'hex')::uuid
      $$`);
    for (const table of ['inbound_events', 'events', 'deliveries']) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN id SET DEFAULT uuid_v7()`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['inbound_events', 'events', 'deliveries']) {
      await q.query(`ALTER TABLE ${table} ALTER COLUMN id SET DEFAULT gen_random_uuid()`);
    }
    await q.query(`DROP FUNCTION uuid_v7()`);
  }
}
