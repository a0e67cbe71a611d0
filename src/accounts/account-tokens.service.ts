import { HttpStatus, Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError } from '../common/api-error';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { OperationalEventsService } from '../dispatcher/operational-events/operational-events.service';
import { RedisConnection, closeRedis, createRedis } from '../redis/redis-connection';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { ZoomApiError } from '../zoom/zoom-error';
import { TOKEN_RENEW_MARGIN_MS, ZoomToken } from '../zoom/zoom-token.provider';
import { InstallationStore, NewTokens, StoredTokens } from './installation.store';
import { AccountTokenSet, GrantRefused, PlatformOAuthClient } from './platform-oauth.client';
import { RenewalLock } from './renewal-lock';

/** How often a process waiting for another's renewal looks whether the lock is free. */
const WAIT_POLL_MS = 50;
/** The lock outlives the renewal's HTTP deadline by this much (docs/accounts.md#tokens). */
const LOCK_MARGIN_MS = 5_000;

/** An installed account's token, with the version of the stored tokens it came from. */
interface AccountToken extends ZoomToken {
  accountId: string;
  version: number;
}

/** 409 naming why an account's installation cannot be used now. */
export function accountUnavailable(accountId: string, status: string): ApiError {
  return new ApiError(
    HttpStatus.CONFLICT,
    status === 'not_installed'
      ? `Platform account ${accountId} is not installed`
      : `Platform account ${accountId} is ${status}: install it again (docs/accounts.md)`,
  );
}

/** The tokens to store of what the platform gave, encrypted. */
export function tokensToStore(cipher: SecretCipherService, set: AccountTokenSet): NewTokens {
  return {
    accessTokenEncrypted: cipher.encrypt(set.accessToken, 'platform-token'),
    refreshTokenEncrypted: cipher.encrypt(set.refreshToken, 'platform-token'),
    accessExpiresAt: new Date(set.expiresAt),
    accessRenewAt: new Date(set.renewAt),
    apiUrl: set.apiBaseUrl,
    scopes: set.scopes,
  };
}

/**
 * The access tokens of installed accounts (docs/accounts.md#tokens). The platform rotates
 * refresh tokens (the one used stops working), so:
 * - one renewal per account at a time across every process (RenewalLock in Redis), and in this
 *   process callers share one promise per account;
 * - the renewal reads the stored tokens again once it holds the lock (another process may have
 *   just renewed), and the new tokens are stored (compare-and-set on the version it read)
 *   before anyone uses them;
 * - a process that finds the lock taken waits for it to free, then reads the stored tokens;
 * - `invalid_grant` marks the installation needs_reinstall and tells its client.
 */
@Injectable()
export class AccountTokens implements OnModuleDestroy {
  private readonly logger = new Logger(AccountTokens.name);
  private readonly cache = new Map<string, AccountToken>();
  private readonly pending = new Map<string, Promise<AccountToken>>();
  /** Per account, the access token the platform last refused (a 401): never handed out again. */
  private readonly refused = new Map<string, string>();
  private readonly redis: RedisConnection;
  private readonly lock: RenewalLock;
  private readonly waitMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: InstallationStore,
    private readonly cipher: SecretCipherService,
    private readonly oauth: PlatformOAuthClient,
    private readonly operational: OperationalEventsService,
  ) {
    this.redis = createRedis(config.redis);
    this.redis.on('error', (error: Error) => this.logger.warn(`redis: ${error.message}`));
    const ttlMs = config.zoom.timeoutMs + LOCK_MARGIN_MS;
    this.lock = new RenewalLock(this.redis, config.redis.prefix, ttlMs);
    this.waitMs = ttlMs + config.zoom.timeoutMs;
  }

  async onModuleDestroy(): Promise<void> {
    await closeRedis(this.redis);
  }

  /** A usable access token of the account; 409 when it is not installed or not active. */
  async get(accountId: string): Promise<ZoomToken> {
    const cached = this.cache.get(accountId);
    if (cached && this.usable(accountId, cached)) {
      // The cache spares a decryption, never a look at the stored row: an account revoked,
      // disconnected, renewed or installed again by any process has a new token_version, and
      // its deleted tokens must not be used once more (docs/accounts.md#leaving).
      const row = await this.store.find(accountId);
      if (row?.status === 'active' && row.tokenVersion === cached.version) return cached;
      this.cache.delete(accountId);
    }
    let shared = this.pending.get(accountId);
    if (!shared) {
      shared = this.obtain(accountId).finally(() => this.pending.delete(accountId));
      this.pending.set(accountId, shared);
    }
    return shared;
  }

  /** The platform refused `token` (401): the next get() renews unless the store has a newer one. */
  invalidate(accountId: string, token: ZoomToken): void {
    this.refused.set(accountId, token.accessToken);
    if (this.cache.get(accountId) === token) this.cache.delete(accountId);
  }

  private usable(accountId: string, token: AccountToken): boolean {
    return Date.now() < token.renewAt && this.refused.get(accountId) !== token.accessToken;
  }

  private async obtain(accountId: string): Promise<AccountToken> {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const stored = await this.active(accountId);
      if (stored.token && this.usable(accountId, stored.token)) return this.keep(stored.token);
      const held = await this.lock.tryTake(accountId);
      if (held) {
        try {
          return await this.renewHolding(accountId);
        } finally {
          await held.release();
        }
      }
      // Another process renews: wait for its lock to free (or expire), then read its result.
      while ((await this.lock.held(accountId)) && Date.now() < deadline) {
        await delay(WAIT_POLL_MS);
      }
      if (Date.now() >= deadline) {
        throw ZoomApiError.timeout(this.waitMs);
      }
    }
  }

  /** Renews while holding the account's lock. */
  private async renewHolding(accountId: string): Promise<AccountToken> {
    const stored = await this.active(accountId);
    if (stored.token && this.usable(accountId, stored.token)) return this.keep(stored.token);
    const refreshToken = this.cipher.decrypt(
      stored.row.refreshTokenEncrypted as string,
      'platform-token',
    );
    let set: AccountTokenSet;
    try {
      set = await this.oauth.renew(refreshToken);
    } catch (error) {
      if (error instanceof GrantRefused) {
        await this.disconnect(stored.row, error.reason);
        throw accountUnavailable(accountId, 'needs_reinstall');
      }
      throw error;
    }
    // Stored before it is used: the refresh token just used no longer works anywhere.
    const saved = await this.store.renewed(
      accountId,
      stored.row.tokenVersion,
      tokensToStore(this.cipher, set),
    );
    if (!saved) {
      // Installed again or revoked meanwhile: what is stored now is the truth.
      const now = await this.active(accountId);
      if (now.token) return this.keep(now.token);
      throw accountUnavailable(accountId, now.row.status);
    }
    this.logger.log(`platform account ${accountId}: tokens renewed`);
    return this.keep(this.tokenOf(saved) as AccountToken);
  }

  private keep(token: AccountToken): AccountToken {
    this.cache.set(token.accountId, token);
    return token;
  }

  /** The stored installation, active; its access token when it has one. */
  private async active(
    accountId: string,
  ): Promise<{ row: StoredTokens; token: AccountToken | null }> {
    const row = await this.store.find(accountId);
    if (!row) throw accountUnavailable(accountId, 'not_installed');
    if (row.status !== 'active' || row.refreshTokenEncrypted === null) {
      throw accountUnavailable(accountId, row.status);
    }
    return { row, token: this.tokenOf(row) };
  }

  private tokenOf(row: StoredTokens): AccountToken | null {
    if (row.accessTokenEncrypted === null || row.accessExpiresAt === null) return null;
    return {
      accountId: row.accountId,
      accessToken: this.cipher.decrypt(row.accessTokenEncrypted, 'platform-token'),
      apiBaseUrl: row.apiUrl ?? this.config.zoom.apiUrl,
      expiresAt: row.accessExpiresAt.getTime(),
      // A row an older process stored has no access_renew_at: a margin before expiry, as then.
      renewAt:
        row.accessRenewAt?.getTime() ?? row.accessExpiresAt.getTime() - TOKEN_RENEW_MARGIN_MS,
      version: row.tokenVersion,
    };
  }

  private async disconnect(row: StoredTokens, reason: string): Promise<void> {
    const changed = await this.store.setStatus(
      row.accountId,
      'needs_reinstall',
      reason,
      row.tokenVersion,
    );
    if (!changed) return;
    this.cache.delete(row.accountId);
    this.logger.warn(`platform account ${row.accountId}: refresh refused, needs reinstall`);
    await this.operational.accountChanged('bridge.account.disconnected', row.installedBy, {
      account_id: row.accountId,
      reason,
    });
  }
}
