import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { RedisConnection, createRedis } from '../../../redis/redis-connection';

/**
 * How long the lease lasts unless renewed, and how often its holder renews it: a holder that
 * dies (SIGKILL included) is replaced within LEASE_MS + TAKE_EVERY_MS plus one connection,
 * well inside the 30 s docs/inbound-sources.md promises.
 */
export const LEASE_MS = 10_000;
export const RENEW_EVERY_MS = 2_500;
/** The holder lets go this long before its lease could run out in Redis, so sockets never overlap. */
const EXPIRY_MARGIN_MS = 1_500;
/** How often a process that stands by tries to take a free lease. */
export const TAKE_EVERY_MS = 2_000;

// Only the holder may extend or give back its lease: another process's must stay.
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

type LeaseRedis = RedisConnection & {
  socketLeaseRenew(key: string, holder: string, ms: number): Promise<number>;
  socketLeaseRelease(key: string, holder: string): Promise<number>;
};

/**
 * The deployment's one holder of the platform socket (docs/inbound-sources.md#one-socket):
 * a Redis key set NX PX with this process's id, renewed by a script that checks the id.
 *
 * Its own connection (to the queues' Redis, docs/operations.md#redis) with no offline queue, so a
 * command fails at once instead of waiting for Redis to come back, and its `close` tells the
 * holder at once that it can no longer prove it holds the lease. `validUntil` is counted from
 * when a renewal was sent, never from its answer, so this process always believes it holds the
 * lease for less time than Redis keeps it.
 */
@Injectable()
export class SocketLease implements OnModuleDestroy {
  readonly holder = randomUUID();
  private readonly logger = new Logger(SocketLease.name);
  private readonly key: string;
  private readonly redis: LeaseRedis;
  private readonly lostListeners: ((reason: string) => void)[] = [];
  private held = false;
  private validUntil = 0;
  private expiry: NodeJS.Timeout | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = `${config.redis.prefix}:websocket:lease`;
    this.redis = createRedis(
      config.redis,
      { enableOfflineQueue: false, maxRetriesPerRequest: 0 },
      { enableOfflineQueue: false },
    ) as LeaseRedis;
    this.redis.defineCommand('socketLeaseRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    this.redis.defineCommand('socketLeaseRelease', { numberOfKeys: 1, lua: RELEASE_LUA });
    // Errors come again as `close`; logged there, not once per retry.
    this.redis.on('error', () => undefined);
    this.redis.on('close', () => this.lose('its Redis connection closed'));
  }

  get holding(): boolean {
    return this.held && Date.now() < this.validUntil - EXPIRY_MARGIN_MS;
  }

  /** Called with the reason whenever this process stops holding the lease. */
  onLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** Takes the lease if it is free; true when this process holds it now. */
  async take(): Promise<boolean> {
    const sentAt = Date.now();
    const answer = await this.redis.set(this.key, this.holder, 'PX', LEASE_MS, 'NX');
    if (answer !== 'OK') return false;
    this.held = true;
    this.extendTo(sentAt + LEASE_MS);
    return true;
  }

  /** Extends the lease; any failure, or the lease being another's, loses it at once. */
  async renew(): Promise<boolean> {
    if (!this.held) return false;
    const sentAt = Date.now();
    try {
      const renewed = await this.redis.socketLeaseRenew(this.key, this.holder, LEASE_MS);
      if (renewed !== 1) {
        this.lose('another process holds the lease');
        return false;
      }
      if (Date.now() >= this.validUntil) {
        this.lose('the renewal came after the lease had run out');
        return false;
      }
      this.extendTo(sentAt + LEASE_MS);
      return true;
    } catch (error) {
      this.lose(`renewing it failed: ${(error as Error).message}`);
      return false;
    }
  }

  /** A renewal that hangs (Redis stalled) must not keep a socket open past the lease. */
  private extendTo(validUntil: number): void {
    this.validUntil = validUntil;
    clearTimeout(this.expiry);
    this.expiry = setTimeout(
      () => this.lose('no renewal came in time'),
      Math.max(0, validUntil - EXPIRY_MARGIN_MS - Date.now()),
    );
  }

  /** Gives the lease back, so another process need not wait for it to run out. */
  async release(): Promise<void> {
    clearTimeout(this.expiry);
    if (!this.held) return;
    this.held = false;
    await this.redis
      .socketLeaseRelease(this.key, this.holder)
      .catch((error: Error) =>
        this.logger.warn(`could not give the socket lease back: ${error.message}`),
      );
  }

  /** The holder's id as Redis has it now (null: nobody holds the socket). */
  async currentHolder(): Promise<string | null> {
    return this.redis.get(this.key);
  }

  lose(reason: string): void {
    clearTimeout(this.expiry);
    if (!this.held) return;
    this.held = false;
    this.logger.warn(`lost the platform socket's lease: ${reason}`);
    for (const listener of this.lostListeners) listener(reason);
  }

  async onModuleDestroy(): Promise<void> {
    await this.release();
    this.held = false;
    this.redis.disconnect();
  }
}
