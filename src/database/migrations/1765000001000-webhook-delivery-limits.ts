import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * webhooks.max_in_flight and webhooks.rate_limit (docs/api.md#receiver-health): a webhook's own limits, across all
 * workers. max_in_flight null means DELIVERY_CONCURRENCY_PER_WEBHOOK, read at run time, so a
 * changed default reaches every webhook that never set its own; rate_limit null means no rate
 * limit. Nullable columns without a default are added without rewriting the table.
 */
export class WebhookDeliveryLimits1765000001000 implements MigrationInterface {
  name = 'WebhookDeliveryLimits1765000001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN max_in_flight integer
          CONSTRAINT webhooks_max_in_flight_ck CHECK (max_in_flight BETWEEN 1 AND 100),
        ADD COLUMN rate_limit integer
          CONSTRAINT webhooks_rate_limit_ck CHECK (rate_limit BETWEEN 1 AND 10000)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN rate_limit, DROP COLUMN max_in_flight`);
  }
}
