import {
  RESERVE_MS,
  SlotAnswer,
  SlotRequest,
  SlotRound,
  WebhookSlots,
} from '../../src/dispatcher/engine/webhook-slots';

/**
 * WebhookSlots in memory, shared by the schedulers given the same instance (as the workers of
 * one Redis are): the limits and the rate window as the Redis script applies them, on this
 * process's clock, a slot given back reserved for a waiting process and announced to it.
 */
export class MemoryWebhookSlots {
  private readonly held = new Map<string, Map<string, number>>();
  private readonly starts = new Map<string, number[]>();
  private readonly waiters = new Map<string, Set<number>>();
  private readonly listeners = new Map<number, (webhookId: string) => void>();
  private holders = 0;
  private sequence = 0;
  /** Every exchange's requests, in order, for assertions. */
  readonly exchanges: SlotRequest[][] = [];

  constructor(private readonly leaseMs = 15000) {}

  /** Slots of the webhook held now, by anyone (reservations for a waiter included). */
  heldBy(webhookId: string): number {
    this.expire(webhookId, Date.now());
    return this.held.get(webhookId)?.size ?? 0;
  }

  /** A view for one process: its own holder id, so its own releases announce nothing to it. */
  forProcess(): WebhookSlots {
    const holder = ++this.holders;
    const slots = {
      exchange: (round: SlotRound) => Promise.resolve(this.exchange(holder, round)),
      onFreed: (listener: (webhookId: string) => void) => this.listeners.set(holder, listener),
    };
    return slots as WebhookSlots;
  }

  private exchange(holder: number, { released, renewed, requests }: SlotRound): SlotAnswer {
    const now = Date.now();
    this.exchanges.push(requests);
    for (const { webhookId, token } of released) {
      const held = this.held.get(webhookId);
      if (!held?.delete(token)) continue;
      const others = [...(this.waiters.get(webhookId) ?? [])].filter((w) => w !== holder);
      if (others.length === 0) continue;
      // Reserved for another process for RESERVE_MS, as the script does.
      held.set(`r|${holder}|${token}`, now + RESERVE_MS);
      for (const waiter of others) {
        queueMicrotask(() => this.listeners.get(waiter)?.(webhookId));
      }
    }
    const contended = new Set<string>();
    for (const { webhookId, token } of renewed) {
      const held = this.held.get(webhookId);
      if (held?.has(token)) held.set(token, now + this.leaseMs);
      if ([...(this.waiters.get(webhookId) ?? [])].some((w) => w !== holder)) {
        contended.add(webhookId);
      }
    }
    const grants = requests.map((r) => {
      this.expire(r.webhookId, now);
      const held = this.held.get(r.webhookId) ?? new Map<string, number>();
      this.held.set(r.webhookId, held);
      const free = r.maxInFlight - held.size;
      let grant = Math.max(0, Math.min(r.want, free));
      if (grant < r.want && free >= 0) {
        for (const member of [...held.keys()]) {
          if (grant >= r.want) break;
          if (member.startsWith('r|') && !member.startsWith(`r|${holder}|`)) {
            held.delete(member);
            grant++;
          }
        }
      }
      // As the script: the first held slot's lapse, and none when nothing was held.
      let retryInMs: number | null =
        grant < r.want && held.size > 0 ? Math.min(...held.values()) - now : null;
      let rateBound = false;
      const starts = (this.starts.get(r.webhookId) ?? []).filter((at) => at > now - 1000);
      if (r.rateLimit !== null) {
        const left = r.rateLimit - starts.length;
        if (left < r.want && left <= grant) {
          grant = Math.max(0, left);
          rateBound = true;
          retryInMs = starts.length > 0 ? starts[0] + 1000 - now : 1000;
        }
      }
      const tokens = Array.from({ length: grant }, () => `${holder}:${++this.sequence}`);
      for (const token of tokens) {
        held.set(token, now + this.leaseMs);
        // The script counts starts only under a rate limit.
        if (r.rateLimit !== null) starts.push(now);
      }
      this.starts.set(r.webhookId, starts);
      const waiters = this.waiters.get(r.webhookId) ?? new Set<number>();
      this.waiters.set(r.webhookId, waiters);
      if (grant < r.want) waiters.add(holder);
      else waiters.delete(holder);
      return { tokens, retryInMs, rateBound };
    });
    return { grants, contended: [...contended] };
  }

  private expire(webhookId: string, now: number): void {
    const held = this.held.get(webhookId);
    for (const [token, until] of held ?? []) if (until <= now) held!.delete(token);
  }
}
