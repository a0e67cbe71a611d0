import { MicroBatcher } from '../../common/micro-batch';
import type { DeliveryOrderStore } from '../../delivery-record/delivery-order.store';
import { LIMITS_TTL_MS } from './scheduler/limit-cache';
import type { DeliveryGate, ScheduledDelivery } from './scheduler/scheduler-work';

/** A delivery as it ends: its ordering key when its webhook orders (DeliveryTarget.orderKey). */
export type EndedDelivery = ScheduledDelivery & { orderKey?: string | null };

/** Webhooks whose ordering is remembered at most; past it the memory starts afresh. */
const KNOWN_MAX = 10_000;

/**
 * The ordering gate (docs/receiving.md#ordered-delivery-per-meeting): of an ordered webhook's deliveries, only the head of each key
 * (meeting) goes to the scheduler; the rest stay pending in PostgreSQL, and the end of a head
 * hands its key's next to the scheduler at once, from whichever worker it ended on.
 *
 * The order itself lives in PostgreSQL (DeliveryOrderStore); this only spares the scheduler
 * what is not due yet. The claim checks the turn again (DeliveryStore.claim), so a worker that
 * believes a webhook unordered (it changed less than LIMITS_TTL_MS ago), or two workers handed
 * the same key, still send one delivery of a key at a time, in order. What a worker dies
 * holding is pending in PostgreSQL: the sweeper queues it again, and this gate lets its head go.
 *
 * Deliveries of a webhook known to be unordered pass at once, as before; those of a webhook
 * not known yet wait for one read of its ordering.
 */
export class OrderingGate implements DeliveryGate {
  private readonly known = new Map<string, { ordered: boolean; at: number }>();
  private readonly ends = new MicroBatcher<string, undefined>(
    async (ids) => {
      this.pass(await this.store.next(ids));
      return ids.map(() => undefined);
    },
    { maxInFlight: 1, maxSize: 500 },
  );

  constructor(
    private readonly store: DeliveryOrderStore,
    /** Hands deliveries whose turn came to the scheduler. */
    private readonly pass: (deliveries: ScheduledDelivery[]) => void,
    /** Reading the order failed: what was held stays pending, for the sweeper. */
    private readonly failed: (what: string, error: Error) => void,
  ) {}

  admit(deliveries: ScheduledDelivery[]): ScheduledDelivery[] {
    const now = Date.now();
    const open: ScheduledDelivery[] = [];
    const held: ScheduledDelivery[] = [];
    const stale = new Set<string>();
    for (const delivery of deliveries) {
      const known = this.known.get(delivery.webhookId);
      if (known && now - known.at > LIMITS_TTL_MS) stale.add(delivery.webhookId);
      // One remembered unordered goes at once, even stale: the claim checks the turn anyway.
      if (known && !known.ordered) open.push(delivery);
      else held.push(delivery);
    }
    if (held.length > 0 || stale.size > 0) void this.check(held, [...stale]);
    return open;
  }

  ended(delivery: EndedDelivery): ScheduledDelivery[] {
    if (delivery.orderKey) {
      this.ends
        .submit(delivery.id)
        .catch((error: Error) => this.failed(`the next of delivery ${delivery.id}`, error));
    }
    return [];
  }

  /** Learns the ordering of the webhooks not known or stale, then passes on the heads of `held`. */
  private async check(held: ScheduledDelivery[], stale: string[]): Promise<void> {
    try {
      const unknown = new Set(stale);
      for (const delivery of held) {
        if (!this.known.has(delivery.webhookId)) unknown.add(delivery.webhookId);
      }
      if (unknown.size > 0) {
        const ids = [...unknown];
        const ordered = await this.store.ordered(ids);
        if (this.known.size > KNOWN_MAX) this.known.clear();
        const at = Date.now();
        for (const id of ids) this.known.set(id, { ordered: ordered.has(id), at });
      }
      if (held.length === 0) return;
      const open = held.filter((d) => this.known.get(d.webhookId)?.ordered === false);
      const ordered = held.filter((d) => this.known.get(d.webhookId)?.ordered !== false);
      const heads = ordered.length > 0 ? await this.store.heads(ordered.map((d) => d.id)) : [];
      this.pass(open.concat(heads));
    } catch (error) {
      this.failed(`the order of ${held.length} deliveries`, error as Error);
    }
  }
}
