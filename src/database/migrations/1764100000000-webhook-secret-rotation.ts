import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The secret a PATCH replaced keeps signing until its expiry (docs/receiving.md, WEBHOOK_SECRET_GRACE_SECONDS):
 * stored encrypted like the current one, and the two columns are set and cleared together.
 */
export class WebhookSecretRotation1764100000000 implements MigrationInterface {
  name = 'WebhookSecretRotation1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN previous_secret_encrypted text,
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD CONSTRAINT webhooks_previous_secret_ck
          CHECK ((previous_secret_encrypted IS NULL) = (previous_secret_expires_at IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        DROP CONSTRAINT webhooks_previous_secret_ck,
        DROP COLUMN previous_secret_expires_at,
        DROP COLUMN previous_secret_encrypted`);
  }
}
