import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an installed account's access token is renewed, as the bridge decided when it got it
 * (docs/accounts.md#tokens): at most once a minute and at least once a day whatever the
 * platform's `expires_in`, so it cannot be derived from `access_expires_at` alone. Tokens stored
 * before renew as they did, 60 s before they expire.
 */
export class InstallationRenewAt1767100000100 implements MigrationInterface {
  name = 'InstallationRenewAt1767100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE installations ADD COLUMN access_renew_at timestamptz(3) NULL`);
    await q.query(
      `UPDATE installations SET access_renew_at = access_expires_at - interval '60 s'
       WHERE access_expires_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE installations DROP COLUMN access_renew_at`);
  }
}
