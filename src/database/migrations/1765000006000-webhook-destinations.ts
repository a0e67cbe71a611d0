import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * docs/destinations.md: a webhook's destination (HTTP, or a broker the operator named), its filter and its
 * custom headers. A broker destination has no URL. The filter is kept as the client sent it
 * (to show it back) and compiled (jsonpath, stored parsed, and its operands), which the
 * fan-out statements match; the headers are one ciphertext, with their masked form beside it.
 */
export class WebhookDestinations1765000006000 implements MigrationInterface {
  name = 'WebhookDestinations1765000006000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ALTER COLUMN url DROP NOT NULL`);
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN destination jsonb NOT NULL DEFAULT '{"type":"http"}',
        ADD COLUMN filter jsonb,
        ADD COLUMN filter_path jsonpath,
        ADD COLUMN filter_vars jsonb,
        ADD COLUMN headers_encrypted text,
        ADD COLUMN headers_masked jsonb`);
    await q.query(`
      ALTER TABLE webhooks
        ADD CONSTRAINT webhooks_destination_url_ck
          CHECK ((destination->>'type' = 'http') = (url IS NOT NULL)),
        ADD CONSTRAINT webhooks_filter_ck
          CHECK ((filter IS NULL) = (filter_path IS NULL) AND (filter IS NULL) = (filter_vars IS NULL)),
        ADD CONSTRAINT webhooks_headers_ck
          CHECK ((headers_encrypted IS NULL) = (headers_masked IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhooks WHERE url IS NULL`);
    await q.query(`
      ALTER TABLE webhooks
        DROP CONSTRAINT webhooks_headers_ck,
        DROP CONSTRAINT webhooks_filter_ck,
        DROP CONSTRAINT webhooks_destination_url_ck,
        DROP COLUMN headers_masked,
        DROP COLUMN headers_encrypted,
        DROP COLUMN filter_vars,
        DROP COLUMN filter_path,
        DROP COLUMN filter,
        DROP COLUMN destination`);
    await q.query(`ALTER TABLE webhooks ALTER COLUMN url SET NOT NULL`);
  }
}
