import type { RedisConnection } from '../redis/redis-connection';
import { randomUUID } from 'node:crypto';

// Only the holder may give the lock back: one that expired and was taken by another process
// must stay with that process.
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

type LockRedis = RedisConnection & {
  renewalLockRelease(key: string, holder: string): Promise<number>;
};

/** A held lock: give it back once the renewed tokens are stored. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * One renewal per account at a time across every process (docs/accounts.md#tokens): a Redis
 * key SET NX PX with a random holder id, given back by a compare-and-delete script. The lock
 * outlives the renewal's HTTP deadline (`ttlMs` > the platform timeout), so a renewal still
 * waiting for its answer is never overtaken; a holder that dies frees it when it expires.
 */
export class RenewalLock {
  private readonly redis: LockRedis;

  constructor(
    redis: RedisConnection,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {
    redis.defineCommand('renewalLockRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    this.redis = redis as LockRedis;
  }

  private key(accountId: string): string {
    return `${this.prefix}:account-renewal:${accountId}`;
  }

  /** The lock when it was free, else null at once. */
  async tryTake(accountId: string): Promise<HeldLock | null> {
    const holder = randomUUID();
    const key = this.key(accountId);
    const taken = await this.redis.set(key, holder, 'PX', this.ttlMs, 'NX');
    if (taken !== 'OK') return null;
    return {
      release: async () => {
        await this.redis.renewalLockRelease(key, holder);
      },
    };
  }

  /** Whether some process holds the account's lock now. */
  async held(accountId: string): Promise<boolean> {
    return (await this.redis.exists(this.key(accountId))) === 1;
  }
}
