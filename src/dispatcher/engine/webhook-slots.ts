import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { QUEUES } from '../../queue/queue.constants';
import type { RedisConnection } from '../../redis/redis-connection';
import { keyGroup } from '../../redis/redis-keys';

/** A slot this process holds: given back once its attempt's request is over. */
export interface SlotToken {
  webhookId: string;
  token: string;
}

/** Slots wanted for one webhook, with the webhook's limits (docs/api.md#receiver-health). */
export interface SlotRequest {
  webhookId: string;
  want: number;
  maxInFlight: number;
  /** Attempts started per second at most; null: no rate limit. */
  rateLimit: number | null;
}

/** What one request got: `tokens.length` slots, possibly none. */
export interface SlotGrant {
  tokens: string[];
  /**
   * When fewer than wanted: in how many ms asking again can succeed without any slot being
   * given back (the oldest start leaves the rate window, or a dead worker's slot lapses).
   */
  retryInMs: number | null;
  /** Fewer than wanted because of the rate limit (then nothing announces a change: retry). */
  rateBound: boolean;
}

/** One round with WebhookSlots. */
export interface SlotRound {
  /** Slots given back. */
  released: SlotToken[];
  /** Slots kept for the next attempt of the same webhook: their leases start again. */
  renewed: SlotToken[];
  requests: SlotRequest[];
}

export interface SlotAnswer {
  /** One per request, in order. */
  grants: SlotGrant[];
  /** Webhooks of `renewed` slots that another process waits for: give those back instead. */
  contended: string[];
}

/**
 * The per-webhook slots of every worker process together (docs/api.md#receiver-health): at most `maxInFlight`
 * held at once, at most `rateLimit` taken in any second. A slot lapses after the lease (one
 * attempt's deadline and a margin) if its holder never gives it back (the process died).
 */
export abstract class WebhookSlots {
  /**
   * Gives back `released`, renews `renewed`, then takes what it can of `requests`, atomically
   * for all of them: one round trip per call.
   */
  abstract exchange(round: SlotRound): Promise<SlotAnswer>;

  /**
   * Calls `listener` with a webhook some other process gave a slot of back while this process
   * was waiting for one (see exchange: a request not fully granted counts as waiting).
   */
  abstract onFreed(listener: (webhookId: string) => void): void;
}

/** How long a slot given back stays for another process that waits for it (see EXCHANGE_LUA). */
export const RESERVE_MS = 250;

/**
 * Gives back, then takes, in one script: atomic against every other worker's exchange, with
 * Redis's clock for every lease (the workers' clocks never meet).
 *
 * Keys per webhook: `slots` (a sorted set: token → when its lease lapses), `starts` (token →
 * when it was taken, the last second's only: the rate window) and `waiters` (the ids of the
 * processes that asked for more than they got). A slot given back while another process waits
 * for that webhook becomes a reservation (`r|<holder>|…`) for RESERVE_MS that only another
 * process may take, and is announced on the channel: so processes take turns instead of the
 * one that gives a slot back taking it again at once, and a waiter that died holds it up for
 * no longer than the reservation. With no one waiting, nothing is announced: a receiver that
 * keeps up costs no messages at all.
 */
const EXCHANGE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
local holder = ARGV[2]
local channel = ARGV[3]
local reserve = tonumber(ARGV[4])
local k, a = 1, 6
local announced = {}
for i = 1, tonumber(ARGV[5]) do
  local slots, waiters, webhook, token = KEYS[k], KEYS[k + 1], ARGV[a], ARGV[a + 1]
  k, a = k + 2, a + 2
  if redis.call('ZREM', slots, token) == 1 then
    local n = redis.call('SCARD', waiters)
    if n > 1 or (n == 1 and redis.call('SISMEMBER', waiters, holder) == 0) then
      redis.call('ZADD', slots, now + reserve, 'r|' .. holder .. '|' .. token)
      if not announced[webhook] then
        redis.call('PUBLISH', channel, webhook)
        announced[webhook] = true
      end
    end
  end
end
local contended = {}
for i = 1, tonumber(ARGV[a]) do
  local slots, waiters, webhook, token = KEYS[k], KEYS[k + 1], ARGV[a + 1], ARGV[a + 2]
  k, a = k + 2, a + 2
  redis.call('ZADD', slots, 'XX', now + lease, token)
  local n = redis.call('SCARD', waiters)
  if not contended[webhook] and
      (n > 1 or (n == 1 and redis.call('SISMEMBER', waiters, holder) == 0)) then
    contended[webhook] = true
    contended[#contended + 1] = webhook
  end
end
a = a + 1
local out = {}
local own = 'r|' .. holder .. '|'
local requests = tonumber(ARGV[a])
a = a + 1
for i = 1, requests do
  local slots, starts, waiters = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  local base, want, max, rate = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]),
    tonumber(ARGV[a + 3])
  k, a = k + 3, a + 4
  redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
  local free = max - redis.call('ZCARD', slots)
  local grant = math.max(0, math.min(want, free))
  if grant < want and free >= 0 then
    -- Slots reserved for waiters by other processes: this one is such a waiter.
    for _, member in ipairs(redis.call('ZRANGE', slots, 0, -1)) do
      if grant >= want then break end
      if string.sub(member, 1, 2) == 'r|' and string.sub(member, 1, #own) ~= own then
        redis.call('ZREM', slots, member)
        grant = grant + 1
      end
    end
  end
  local retry, rateBound = -1, 0
  if grant < want then
    local first = redis.call('ZRANGE', slots, 0, 0, 'WITHSCORES')
    if first[2] then retry = tonumber(first[2]) - now end
  end
  if rate > 0 then
    redis.call('ZREMRANGEBYSCORE', starts, '-inf', now - 1000)
    local left = rate - redis.call('ZCARD', starts)
    if left < want and left <= grant then
      grant = math.max(0, left)
      rateBound = 1
      local oldest = redis.call('ZRANGE', starts, 0, 0, 'WITHSCORES')
      -- An empty window: the oldest start is one of those granted now.
      retry = oldest[2] and (tonumber(oldest[2]) + 1000 - now) or 1000
    end
  end
  for j = 1, grant do
    redis.call('ZADD', slots, now + lease, base .. ':' .. j)
    if rate > 0 then redis.call('ZADD', starts, now, base .. ':' .. j) end
  end
  if grant > 0 then
    redis.call('PEXPIRE', slots, lease * 2)
    if rate > 0 then redis.call('PEXPIRE', starts, 2000) end
  end
  if grant < want then
    redis.call('SADD', waiters, holder)
    redis.call('PEXPIRE', waiters, lease)
  else
    redis.call('SREM', waiters, holder)
  end
  out[i] = { grant, retry, rateBound }
end
local list = {}
for _, webhook in ipairs(contended) do list[#list + 1] = webhook end
return { out, list }
`;

type ExchangeAnswer = [
  grants: [grant: number, retryInMs: number, rateBound: number][],
  contended: string[],
];

type SlotsRedis = RedisConnection & {
  webhookSlotsExchange(...args: (string | number)[]): Promise<ExchangeAnswer>;
};

/**
 * The slots in Redis, beside the queues (the same Redis, QUEUE_PREFIX): every worker already
 * reaches it, and one script call per scheduling round serves every webhook at once. Redis
 * losing its data frees every slot at once: for at most one attempt's length a webhook may
 * then have up to twice its limit in flight.
 */
@Injectable()
export class RedisWebhookSlots extends WebhookSlots implements OnModuleDestroy {
  private readonly logger = new Logger(RedisWebhookSlots.name);
  /** This process, as a holder of slots and a waiter for them. */
  private readonly holder = randomUUID();
  private sequence = 0;
  private readonly leaseMs: number;
  private readonly prefix: string;
  private readonly channel: string;
  private readonly redis: SlotsRedis;
  private subscriber: RedisConnection | null = null;

  constructor(@Inject(APP_CONFIG) config: AppConfig, @InjectQueue(QUEUES.deliveries) queue: Queue) {
    super();
    this.leaseMs = slotLeaseMs(config);
    this.prefix = keyGroup(config.redis.prefix, 'slots');
    this.channel = `${this.prefix}:freed`;
    // The deliveries queue's own connection: commands on it keep their order, so a slot given
    // back before a request is taken is free for it.
    this.redis = queue.client as unknown as SlotsRedis;
    if (!this.redis.webhookSlotsExchange) {
      this.redis.defineCommand('webhookSlotsExchange', { lua: EXCHANGE_LUA });
    }
  }

  async exchange({ released, renewed, requests }: SlotRound): Promise<SlotAnswer> {
    const keys: string[] = [];
    const args: (string | number)[] = [
      this.leaseMs,
      this.holder,
      this.channel,
      RESERVE_MS,
      released.length,
    ];
    for (const { webhookId, token } of released) {
      keys.push(this.key(webhookId, 'slots'), this.key(webhookId, 'waiters'));
      args.push(webhookId, token);
    }
    args.push(renewed.length);
    for (const { webhookId, token } of renewed) {
      keys.push(this.key(webhookId, 'slots'), this.key(webhookId, 'waiters'));
      args.push(webhookId, token);
    }
    args.push(requests.length);
    const bases: string[] = [];
    for (const r of requests) {
      const base = `${this.holder}:${++this.sequence}`;
      bases.push(base);
      keys.push(
        this.key(r.webhookId, 'slots'),
        this.key(r.webhookId, 'starts'),
        this.key(r.webhookId, 'waiters'),
      );
      args.push(base, r.want, r.maxInFlight, r.rateLimit ?? 0);
    }
    const [grants, contended] = await this.redis.webhookSlotsExchange(
      keys.length,
      ...keys,
      ...args,
    );
    return {
      grants: grants.map(([grant, retry, rateBound], i) => ({
        tokens: Array.from({ length: grant }, (_, j) => `${bases[i]}:${j + 1}`),
        retryInMs: retry < 0 ? null : retry,
        rateBound: rateBound === 1,
      })),
      contended,
    };
  }

  onFreed(listener: (webhookId: string) => void): void {
    if (this.subscriber) throw new Error('WebhookSlots.onFreed: one listener only');
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, webhookId: string) => listener(webhookId));
    // Without a listener ioredis prints each reconnect's error as plain text on stderr. Redis
    // away is said already (the start's warning, /health/ready, the queues' own errors), so
    // the first error of each outage is kept at debug.
    let down = false;
    subscriber.on('ready', () => (down = false));
    subscriber.on('error', (error: Error) => {
      if (down) return;
      down = true;
      this.logger.debug(`freed-slot notices wait for Redis: ${error.message}`);
    });
    // A message lost while reconnecting costs at most a lease: exchange tells when to retry.
    subscriber
      .subscribe(this.channel)
      .catch((error: Error) =>
        this.logger.warn(`not subscribed to freed slots (${error.message}); waits use the leases`),
      );
  }

  async onModuleDestroy(): Promise<void> {
    if (!this.subscriber) return;
    // QUIT on a connection that is reconnecting waits for a Redis that may never come back.
    if (this.subscriber.status === 'ready') await this.subscriber.quit().catch(() => undefined);
    else this.subscriber.disconnect();
  }

  // One round touches many webhooks' keys: all of them share the slots' hash tag, so on a
  // Cluster every slot lives on one node and the script never meets CROSSSLOT.
  private key(webhookId: string, what: string): string {
    return `${this.prefix}:${webhookId}:${what}`;
  }
}

/** A lease margin past the attempt's deadline: a claim before it, recording after it. */
export const SLOT_LEASE_MARGIN_MS = 5000;

/**
 * How long a slot is held at most: an attempt's deadline and the margin, well within the
 * DELIVERY_TIMEOUT_MS + 30 s in which docs/api.md#receiver-health wants a dead worker's slots free again.
 */
export function slotLeaseMs(config: AppConfig): number {
  return config.delivery.timeoutMs + SLOT_LEASE_MARGIN_MS;
}
