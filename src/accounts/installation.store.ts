import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';

export const INSTALLATION_STATUSES = ['active', 'needs_reinstall', 'revoked'] as const;
export type InstallationStatus = (typeof INSTALLATION_STATUSES)[number];

/** An installation as listed: never a token. */
export interface Installation {
  accountId: string;
  installedBy: string;
  scopes: string;
  status: InstallationStatus;
  statusReason: string | null;
  installedAt: Date;
}

/** An installation with its tokens still encrypted, and the version they are at. */
export interface StoredTokens extends Installation {
  accessTokenEncrypted: string | null;
  refreshTokenEncrypted: string | null;
  accessExpiresAt: Date | null;
  /** When the access token is renewed (bounded, see AccountTokenSet.renewAt); null: before. */
  accessRenewAt: Date | null;
  apiUrl: string | null;
  tokenVersion: number;
}

/** Tokens to store, encrypted already. */
export interface NewTokens {
  accessTokenEncrypted: string;
  refreshTokenEncrypted: string;
  accessExpiresAt: Date;
  accessRenewAt: Date;
  apiUrl: string | null;
  scopes: string;
}

/** Why a state was not taken: the callback page names it. */
export type StateProblem = 'unknown' | 'used' | 'expired';

interface InstallationRow {
  account_id: string;
  installed_by: string;
  scopes: string;
  status: InstallationStatus;
  status_reason: string | null;
  installed_at: Date;
  access_token_encrypted: string | null;
  refresh_token_encrypted: string | null;
  access_expires_at: Date | null;
  access_renew_at: Date | null;
  api_url: string | null;
  token_version: number;
}

const COLUMNS = `account_id, installed_by, scopes, status, status_reason, installed_at,
  access_token_encrypted, refresh_token_encrypted, access_expires_at, access_renew_at, api_url,
  token_version`;

// Installing again replaces the tokens and the installer, and makes it active; the version goes
// on, so a renewal of the tokens it replaced cannot land on the new ones.
const UPSERT_SQL = `
  INSERT INTO installations (account_id, installed_by, scopes, status, access_token_encrypted,
                             refresh_token_encrypted, access_expires_at, api_url, access_renew_at)
  VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8)
  ON CONFLICT (account_id) DO UPDATE SET installed_by = EXCLUDED.installed_by,
    scopes = EXCLUDED.scopes, status = 'active', status_reason = NULL,
    access_token_encrypted = EXCLUDED.access_token_encrypted,
    refresh_token_encrypted = EXCLUDED.refresh_token_encrypted,
    access_expires_at = EXCLUDED.access_expires_at, access_renew_at = EXCLUDED.access_renew_at,
    api_url = EXCLUDED.api_url, token_version = installations.token_version + 1, installed_at = now(), updated_at = now()
  RETURNING ${COLUMNS}`;

// Lands only on the tokens the renewal started from ($2): never over a newer install's.
const RENEWED_SQL = `
  UPDATE installations SET access_token_encrypted = $3, refresh_token_encrypted = $4,
    access_expires_at = $5, api_url = coalesce($6, api_url), scopes = $7, access_renew_at = $8,
    token_version = token_version + 1, updated_at = now()
  WHERE account_id = $1 AND token_version = $2 AND status = 'active'
  RETURNING ${COLUMNS}`;

const STATUS_SQL = `
  UPDATE installations SET status = $2, status_reason = $3, updated_at = now(),
    token_version = token_version + 1,
    access_token_encrypted = CASE WHEN $2 = 'active' THEN access_token_encrypted END,
    refresh_token_encrypted = CASE WHEN $2 = 'active' THEN refresh_token_encrypted END,
    access_expires_at = CASE WHEN $2 = 'active' THEN access_expires_at END,
    access_renew_at = CASE WHEN $2 = 'active' THEN access_renew_at END
  WHERE account_id = $1 AND ($4::int IS NULL OR token_version = $4) AND status <> 'revoked'
  RETURNING ${COLUMNS}`;

// Revoked: the tokens go at once, and the account's data is queued for the retention job.
// Once: of two workers that saw the same app_deauthorized (or a DELETE beside it), one revokes
// and tells the client, the other finds nothing to do.
const REVOKE_SQL = `
  WITH r AS (
    UPDATE installations SET status = 'revoked', status_reason = $2, updated_at = now(),
      token_version = token_version + 1, access_token_encrypted = NULL,
      refresh_token_encrypted = NULL, access_expires_at = NULL, access_renew_at = NULL
    WHERE account_id = $1 AND status <> 'revoked'
    RETURNING ${COLUMNS}
  ),
  p AS (
    INSERT INTO account_purges (account_id) SELECT $1 WHERE EXISTS (SELECT 1 FROM r)
    ON CONFLICT (account_id) DO UPDATE SET requested_at = now()
  )
  SELECT * FROM r`;

const STATE_INSERT_SQL = `
  INSERT INTO install_states (state_hash, client_id, verifier_encrypted, expires_at)
  VALUES ($1, $2, $3, $4)`;

// Taken once, whichever process answers the callback: the UPDATE is the single use.
const STATE_TAKE_SQL = `
  UPDATE install_states SET used_at = now()
  WHERE state_hash = $1 AND used_at IS NULL AND expires_at > now()
  RETURNING client_id, verifier_encrypted`;

const STATE_PROBLEM_SQL = `
  SELECT CASE WHEN used_at IS NOT NULL THEN 'used' ELSE 'expired' END AS problem
  FROM install_states WHERE state_hash = $1`;

// Kept a day past expiry, so a late callback still hears "expired" rather than "unknown".
const STATE_SWEEP_SQL = `DELETE FROM install_states WHERE expires_at < now() - interval '1 day'`;

// The platform's app_deauthorized events (stored like every inbound event) of accounts still
// installed, received after they were installed; another app's ($1, when set) are not ours.
const DEAUTHORIZED_SQL = `
  SELECT DISTINCT ON (ie.account_id) ie.account_id,
    ie.payload #>> '{payload,deauthorization_time}' AS at, ie.received_at
  FROM inbound_events ie JOIN installations i ON i.account_id = ie.account_id
  WHERE ie.event = 'app_deauthorized' AND i.status <> 'revoked'
    AND ie.received_at > i.installed_at
    AND ($1::text IS NULL OR coalesce(ie.payload #>> '{payload,client_id}', $1) = $1)
  ORDER BY ie.account_id, ie.received_at DESC`;

export const INSTALLATION_STATEMENTS = [
  DEAUTHORIZED_SQL,
  UPSERT_SQL,
  RENEWED_SQL,
  STATUS_SQL,
  REVOKE_SQL,
  STATE_INSERT_SQL,
  STATE_TAKE_SQL,
  STATE_PROBLEM_SQL,
  STATE_SWEEP_SQL,
];

function toStored(row: InstallationRow): StoredTokens {
  return {
    accountId: row.account_id,
    installedBy: row.installed_by,
    scopes: row.scopes,
    status: row.status,
    statusReason: row.status_reason,
    installedAt: row.installed_at,
    accessTokenEncrypted: row.access_token_encrypted,
    refreshTokenEncrypted: row.refresh_token_encrypted,
    accessExpiresAt: row.access_expires_at,
    accessRenewAt: row.access_renew_at,
    apiUrl: row.api_url,
    tokenVersion: row.token_version,
  };
}

/** Only what a listing may show. */
export const listed = (stored: StoredTokens): Installation => ({
  accountId: stored.accountId,
  installedBy: stored.installedBy,
  scopes: stored.scopes,
  status: stored.status,
  statusReason: stored.statusReason,
  installedAt: stored.installedAt,
});

/** The installations and install states in PostgreSQL (docs/accounts.md). */
@Injectable()
export class InstallationStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async install(accountId: string, clientId: string, tokens: NewTokens): Promise<StoredTokens> {
    const [row] = await query<InstallationRow>(this.db, UPSERT_SQL, [
      accountId,
      clientId,
      tokens.scopes,
      tokens.accessTokenEncrypted,
      tokens.refreshTokenEncrypted,
      tokens.accessExpiresAt,
      tokens.apiUrl,
      tokens.accessRenewAt,
    ]);
    return toStored(row);
  }

  async find(accountId: string): Promise<StoredTokens | null> {
    const [row] = await query<InstallationRow>(
      this.db,
      `SELECT ${COLUMNS} FROM installations WHERE account_id = $1`,
      [accountId],
    );
    return row ? toStored(row) : null;
  }

  /** Every installation, or those `clientId` installed; newest first. */
  async list(clientId: string | null): Promise<Installation[]> {
    const rows = await query<InstallationRow>(
      this.db,
      `SELECT ${COLUMNS} FROM installations WHERE $1::text IS NULL OR installed_by = $1
       ORDER BY installed_at DESC, account_id`,
      [clientId],
    );
    return rows.map((row) => listed(toStored(row)));
  }

  /** The accounts `clientId` installed and still holds (not revoked). */
  async installedBy(clientId: string): Promise<string[]> {
    const rows = await query<{ account_id: string }>(
      this.db,
      `SELECT account_id FROM installations WHERE installed_by = $1 AND status <> 'revoked'`,
      [clientId],
    );
    return rows.map((r) => r.account_id);
  }

  /** The accounts installed and active (reconciliation runs for each, docs/accounts.md). */
  async activeAccounts(): Promise<string[]> {
    const rows = await query<{ account_id: string }>(
      this.db,
      `SELECT account_id FROM installations WHERE status = 'active' ORDER BY account_id`,
      [],
    );
    return rows.map((r) => r.account_id);
  }

  /** Stores renewed tokens over version `fromVersion`; null when they moved on meanwhile. */
  async renewed(
    accountId: string,
    fromVersion: number,
    tokens: NewTokens,
  ): Promise<StoredTokens | null> {
    const [row] = await query<InstallationRow>(this.db, RENEWED_SQL, [
      accountId,
      fromVersion,
      tokens.accessTokenEncrypted,
      tokens.refreshTokenEncrypted,
      tokens.accessExpiresAt,
      tokens.apiUrl,
      tokens.scopes,
      tokens.accessRenewAt,
    ]);
    return row ? toStored(row) : null;
  }

  /**
   * Sets a status other than revoked (tokens dropped unless active); with `atVersion`, only
   * while the tokens are still at it. Null when nothing changed.
   */
  async setStatus(
    accountId: string,
    status: Exclude<InstallationStatus, 'revoked'>,
    reason: string | null,
    atVersion: number | null,
  ): Promise<StoredTokens | null> {
    const [row] = await query<InstallationRow>(this.db, STATUS_SQL, [
      accountId,
      status,
      reason,
      atVersion,
    ]);
    return row ? toStored(row) : null;
  }

  /** Revokes the installation (tokens deleted) and queues the account's data for deletion. */
  async revoke(accountId: string, reason: string): Promise<StoredTokens | null> {
    const [row] = await query<InstallationRow>(this.db, REVOKE_SQL, [accountId, reason]);
    return row ? toStored(row) : null;
  }

  async saveState(
    stateHash: string,
    clientId: string,
    verifierEncrypted: string,
    expiresAt: Date,
  ): Promise<void> {
    await query(this.db, STATE_INSERT_SQL, [stateHash, clientId, verifierEncrypted, expiresAt]);
  }

  /** Takes a state once; its problem when it cannot be taken. */
  async takeState(
    stateHash: string,
  ): Promise<{ clientId: string; verifierEncrypted: string } | { problem: StateProblem }> {
    const [taken] = await query<{ client_id: string; verifier_encrypted: string }>(
      this.db,
      STATE_TAKE_SQL,
      [stateHash],
    );
    if (taken) return { clientId: taken.client_id, verifierEncrypted: taken.verifier_encrypted };
    const [found] = await query<{ problem: StateProblem }>(this.db, STATE_PROBLEM_SQL, [stateHash]);
    return { problem: found?.problem ?? 'unknown' };
  }

  /** Installed accounts whose app_deauthorized arrived, with when they left. */
  async deauthorizedAccounts(
    appClientId: string | null,
  ): Promise<{ accountId: string; at: Date }[]> {
    const rows = await query<{ account_id: string; at: string | null; received_at: Date }>(
      this.db,
      DEAUTHORIZED_SQL,
      [appClientId],
    );
    return rows.map((r) => {
      const at = r.at === null ? NaN : Date.parse(r.at);
      return { accountId: r.account_id, at: Number.isNaN(at) ? r.received_at : new Date(at) };
    });
  }

  async sweepStates(): Promise<void> {
    await query(this.db, STATE_SWEEP_SQL, []);
  }
}
