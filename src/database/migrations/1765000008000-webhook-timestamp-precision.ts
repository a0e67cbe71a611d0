import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * webhooks.updated_at in milliseconds, as created_at is. With created_at rounded to the
 * millisecond and updated_at kept to the microsecond, the API (JavaScript dates, milliseconds,
 * truncated) could show a new webhook updated 1 ms before it was created. Both now round the
 * same now() the same way. The table is small (WEBHOOKS_PER_CLIENT per client): rewriting it is
 * cheap.
 */
export class WebhookTimestampPrecision1765000008000 implements MigrationInterface {
  name = 'WebhookTimestampPrecision1765000008000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ALTER COLUMN updated_at TYPE timestamptz(3)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ALTER COLUMN updated_at TYPE timestamptz`);
  }
}
