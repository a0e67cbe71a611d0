import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Platform accounts that installed the OAuth app (docs/accounts.md): one row per account, its
 * tokens encrypted (SECRETS_ENCRYPTION_KEY), `token_version` counting renewals so that a store
 * of renewed tokens only lands on the tokens it renewed. `install_states` are the single-use
 * states of the install flow (only a hash of the state is kept, and the PKCE verifier
 * encrypted). `account_purges` are the accounts whose stored data the retention job deletes
 * (up to `requested_at`, so data of a later install stays).
 */
export class PlatformInstallations1767000490349 implements MigrationInterface {
  name = 'PlatformInstallations1767000490349';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE installations (
        account_id text PRIMARY KEY,
        installed_by text NOT NULL,
        scopes text NOT NULL DEFAULT '',
        status text NOT NULL CONSTRAINT installations_status_ck
          CHECK (status IN ('active', 'needs_reinstall', 'revoked')),
        status_reason text NULL,
        access_token_encrypted text NULL,
        refresh_token_encrypted text NULL,
        access_expires_at timestamptz(3) NULL,
        api_url text NULL,
        token_version integer NOT NULL DEFAULT 0,
        installed_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX installations_installed_by_idx ON installations (installed_by)`);
    await q.query(`
      CREATE TABLE install_states (
        state_hash text PRIMARY KEY,
        client_id text NOT NULL,
        verifier_encrypted text NOT NULL,
        expires_at timestamptz(3) NOT NULL,
        used_at timestamptz(3) NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX install_states_expires_idx ON install_states (expires_at)`);
    // The watcher of the platform's app_deauthorized events reads only these.
    await q.query(`
      CREATE INDEX inbound_events_deauthorized_idx ON inbound_events (account_id, received_at)
        WHERE event = 'app_deauthorized'`);
    await q.query(`
      CREATE TABLE account_purges (
        account_id text PRIMARY KEY,
        requested_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE account_purges`);
    await q.query(`DROP INDEX inbound_events_deauthorized_idx`);
    await q.query(`DROP TABLE install_states`);
    await q.query(`DROP TABLE installations`);
  }
}
