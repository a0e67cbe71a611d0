import { DeliveryOrderStore } from '../../src/delivery-record/delivery-order.store';
import type { DeliveryEntity } from '../../src/delivery-record/delivery.entity';
import type { DeliveryRef } from '../../src/delivery-record/delivery.store';
import type { MemoryTables } from './memory-stores';

/** Under way: leased, or between the attempts of its series (as HEAD_ORDER in the SQL). */
function underWay(d: DeliveryEntity, now: number): boolean {
  return d.attemptCount > d.seriesStart || (!!d.leaseUntil && d.leaseUntil.getTime() > now);
}

/** The pending delivery of `delivery`'s webhook and key that goes next, as orderHeadOf. */
export function orderHeadIn(tables: MemoryTables, delivery: DeliveryEntity): DeliveryEntity | null {
  const now = Date.now();
  const rank = (d: DeliveryEntity) => [underWay(d, now) ? 0 : 1, Number(d.orderTs), d.id] as const;
  let head: DeliveryEntity | null = null;
  for (const d of tables.deliveries.values()) {
    if (d.webhookId !== delivery.webhookId || d.orderKey !== delivery.orderKey) continue;
    if (d.status !== 'pending') continue;
    if (head === null) head = d;
    else {
      const [a, b] = [rank(d), rank(head)];
      if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) {
        head = d;
      }
    }
  }
  return head;
}

/** Whether ordering lets `delivery` go now, as orderAllows. */
export function orderAllowsIn(tables: MemoryTables, delivery: DeliveryEntity): boolean {
  if (!delivery.orderKey) return true;
  if (tables.webhooks.get(delivery.webhookId)?.ordering !== 'meeting') return true;
  return orderHeadIn(tables, delivery)?.id === delivery.id;
}

/** Claimable now (a second's leeway), as the SQL's due and unleased conditions. */
function claimableNow(d: DeliveryEntity, now: number): boolean {
  return (
    d.status === 'pending' &&
    (d.nextAttemptAt?.getTime() ?? Infinity) <= now + 1000 &&
    !(d.leaseUntil && d.leaseUntil.getTime() > now)
  );
}

export class MemoryDeliveryOrderStore extends DeliveryOrderStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  ordered(webhookIds: string[]): Promise<Set<string>> {
    return Promise.resolve(
      new Set(webhookIds.filter((id) => this.tables.webhooks.get(id)?.ordering === 'meeting')),
    );
  }

  heads(deliveryIds: string[]): Promise<DeliveryRef[]> {
    const now = Date.now();
    const routes: DeliveryRef[] = [];
    for (const id of deliveryIds) {
      const d = this.tables.deliveries.get(id);
      if (d && claimableNow(d, now) && orderAllowsIn(this.tables, d)) {
        routes.push({ id, webhookId: d.webhookId });
      }
    }
    return Promise.resolve(routes);
  }

  next(endedIds: string[]): Promise<DeliveryRef[]> {
    const now = Date.now();
    const seen = new Set<string>();
    const routes: DeliveryRef[] = [];
    for (const id of endedIds) {
      const d = this.tables.deliveries.get(id);
      if (!d?.orderKey || seen.has(`${d.webhookId}\u0000${d.orderKey}`)) continue;
      seen.add(`${d.webhookId}\u0000${d.orderKey}`);
      const head = orderHeadIn(this.tables, d);
      if (head && claimableNow(head, now)) routes.push({ id: head.id, webhookId: head.webhookId });
    }
    return Promise.resolve(routes);
  }
}
