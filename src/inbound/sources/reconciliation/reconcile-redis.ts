import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { QUEUES } from '../../../queue/queue.constants';
import type { RedisConnection } from '../../../redis/redis-connection';
import { keyGroup } from '../../../redis/redis-keys';

/**
 * Takes one request from reconciliation's budget (RECONCILE_MAX_RPS across every process): a
 * sliding window of the starts of the last second, on Redis's clock, widened by WINDOW_MARGIN_MS:
 * requests reach the platform after varying delays, and two granted exactly a second apart could
 * arrive less than a second apart, one too many in the platform's second. Returns 0 when taken, else
 * how many ms until the oldest start leaves the window. A 429's wait (`pause`) holds every
 * process: while the key lives, nothing is taken.
 */
const TAKE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return pause end
local window = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], window * 2)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
`;

/** Renews the lease only while this process holds it (1), else 0. */
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** See TAKE_LUA. */
export const WINDOW_MARGIN_MS = 150;

type ScriptedRedis = RedisConnection & {
  reconcileTake(
    budget: string,
    pause: string,
    max: number,
    member: string,
    windowMs: number,
  ): Promise<number>;
  reconcileRenew(lease: string, holder: string, ms: number): Promise<number>;
  reconcileRelease(lease: string, holder: string): Promise<number>;
};

/**
 * What reconciliation coordinates through Redis across processes: its request budgets and the
 * lease of the one process that runs (docs/reconciliation.md#one-run-at-a-time). A budget is
 * reconciliation's own: passthrough calls never take from it, so a run cannot starve them. There
 * is one per platform account (the platform's limits are per account,
 * docs/reconciliation.md#accounts), `account` '' being the server-to-server one's: an account
 * at its limit, or paused by a 429, holds back only its own requests.
 */
@Injectable()
export class ReconcileRedis {
  /** This process as a lease holder. */
  readonly holder = randomUUID();
  private readonly redis: ScriptedRedis;
  private readonly prefix: string;
  private sequence = 0;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @InjectQueue(QUEUES.inbound) queue: Queue) {
    // TAKE_LUA's budget and pause share a hash tag (one Cluster node; no CROSSSLOT).
    this.prefix = keyGroup(config.redis.prefix, 'reconcile');
    this.redis = queue.client as unknown as ScriptedRedis;
    if (!this.redis.reconcileTake) {
      this.redis.defineCommand('reconcileTake', { numberOfKeys: 2, lua: TAKE_LUA });
      this.redis.defineCommand('reconcileRenew', { numberOfKeys: 1, lua: RENEW_LUA });
      this.redis.defineCommand('reconcileRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    }
  }

  /** 0 once a request of `account` may start; else the ms to wait before asking again. */
  take(maxRps: number, account = ''): Promise<number> {
    return this.redis.reconcileTake(
      this.key('budget', account),
      this.key('pause', account),
      maxRps,
      `${this.holder}:${++this.sequence}`,
      1000 + WINDOW_MARGIN_MS,
    );
  }

  /** After a 429: no process starts a request of `account` for `ms`. */
  async pause(ms: number, account = ''): Promise<void> {
    await this.redis.set(this.key('pause', account), '1', 'PX', Math.max(1, ms));
  }

  // The server-to-server account keeps the keys it had before accounts were installed.
  private key(kind: 'budget' | 'pause', account: string): string {
    return account === '' ? `${this.prefix}:${kind}` : `${this.prefix}:${kind}:${account}`;
  }

  /** Whether this process now holds (or still holds) the run lease for `ms`. */
  async hold(ms: number): Promise<boolean> {
    const lease = `${this.prefix}:lease`;
    if ((await this.redis.reconcileRenew(lease, this.holder, ms)) === 1) return true;
    return (await this.redis.set(lease, this.holder, 'PX', ms, 'NX')) === 'OK';
  }

  async release(): Promise<void> {
    await this.redis.reconcileRelease(`${this.prefix}:lease`, this.holder);
  }
}
