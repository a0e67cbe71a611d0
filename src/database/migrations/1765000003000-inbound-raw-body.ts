import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request's own bytes of an inbound event whose `payload` (jsonb) could not hold them as
 * they came: text with U+0000 or an unpaired surrogate (U+FFFD in the jsonb copy), a number
 * past numeric's range (a string there), bytes that are not UTF-8. Null for every other event,
 * whose jsonb is the record as it came.
 */
export class InboundRawBody1765000003000 implements MigrationInterface {
  name = 'InboundRawBody1765000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound_events ADD COLUMN raw_body bytea`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound_events DROP COLUMN raw_body`);
  }
}
