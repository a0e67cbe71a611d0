import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { OperationalEventsService } from '../dispatcher/operational-events/operational-events.service';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { Installation, InstallationStore, StoredTokens } from './installation.store';
import { PlatformOAuthClient } from './platform-oauth.client';

/** How an account left: uninstalled on the platform, or removed through the API. */
export type LeaveReason = 'app_deauthorized' | 'removed';

/**
 * Which client holds which platform account (docs/accounts.md#whose-events), the listing, and
 * an account leaving: the installation revoked at once (tokens deleted) and the account's data
 * queued for the retention job.
 */
@Injectable()
export class AccountsService {
  private readonly logger = new Logger(AccountsService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: InstallationStore,
    private readonly cipher: SecretCipherService,
    private readonly oauth: PlatformOAuthClient,
    private readonly operational: OperationalEventsService,
  ) {}

  /** The AUTH_CLIENTS accounts of a client: '*', or the ids listed. */
  listedAccounts(clientId: string): '*' | string[] {
    return this.config.auth.clients.find((c) => c.clientId === clientId)?.accounts ?? [];
  }

  /** Whether `clientId` holds the account: listed for it, or installed by it and not revoked. */
  async holds(clientId: string, accountId: string): Promise<boolean> {
    const listed = this.listedAccounts(clientId);
    if (listed === '*' || listed.includes(accountId)) return true;
    const found = await this.store.find(accountId);
    return found !== null && found.installedBy === clientId && found.status !== 'revoked';
  }

  /**
   * The accounts a client holds, for reads narrowed by account (attendance): null when it
   * holds every one (`"*"`), else those listed for it and those it installed and still holds.
   */
  async heldAccounts(clientId: string): Promise<string[] | null> {
    const listed = this.listedAccounts(clientId);
    if (listed === '*') return null;
    return [...new Set([...listed, ...(await this.store.installedBy(clientId))])];
  }

  /** The installations the client holds; every one for a bridge:admin client. */
  async list(clientId: string, admin: boolean): Promise<Installation[]> {
    const all = await this.store.list(null);
    const listed = this.listedAccounts(clientId);
    if (admin || listed === '*') return all;
    return all.filter((i) => i.installedBy === clientId || listed.includes(i.accountId));
  }

  /** DELETE /api/platform/accounts/{id}: an account the caller installed, revoked everywhere. */
  async remove(clientId: string, accountId: string): Promise<void> {
    const found = await this.store.find(accountId);
    if (!found || found.installedBy !== clientId || found.status === 'revoked') {
      throw new ApiError(
        HttpStatus.NOT_FOUND,
        `Platform account ${accountId} is not installed by this client`,
      );
    }
    await this.revokeAtPlatform(found);
    await this.leave(found, 'removed', new Date());
  }

  /** The platform's app_deauthorized for an installed account: it leaves at once. */
  async deauthorized(accountId: string, at: Date): Promise<boolean> {
    const found = await this.store.find(accountId);
    if (!found || found.status === 'revoked') return false;
    await this.leave(found, 'app_deauthorized', at);
    return true;
  }

  private async leave(found: StoredTokens, reason: LeaveReason, at: Date): Promise<void> {
    const revoked = await this.store.revoke(found.accountId, reason);
    if (!revoked) return;
    this.logger.log(`platform account ${found.accountId} left (${reason}): tokens deleted`);
    await this.operational.accountChanged('bridge.account.deauthorized', found.installedBy, {
      account_id: found.accountId,
      reason,
      deauthorized_at: at.toISOString(),
    });
  }

  /**
   * The refresh token is what keeps access: revoking it ends the grant. A platform that cannot
   * be reached does not keep the account here: the tokens are deleted all the same.
   */
  private async revokeAtPlatform(found: StoredTokens): Promise<void> {
    if (found.refreshTokenEncrypted === null) return;
    try {
      await this.oauth.revoke(this.cipher.decrypt(found.refreshTokenEncrypted, 'platform-token'));
    } catch (error) {
      this.logger.warn(
        `platform account ${found.accountId}: revocation at the platform failed ` +
          `(${(error as Error).message}); its tokens are deleted here all the same`,
      );
    }
  }
}
