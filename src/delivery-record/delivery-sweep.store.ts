import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';
import { DeliveryRef } from './delivery.store';
import { orderAllows } from './order-sql';
import { Statement } from './statement';

// Of an ordered webhook's deliveries only each key's head (docs/receiving.md#ordered-delivery-per-meeting): the others wait for it,
// and re-queueing them every sweep would only have the workers read that again.
const DUE_SQL = `
  SELECT d.id, d.webhook_id, d.next_attempt_at FROM deliveries d
  JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.status = 'pending'
    AND d.next_attempt_at <= now() - make_interval(secs => $1::int / 1000.0)
    AND (d.lease_until IS NULL OR d.lease_until <= now())
    AND ($2::timestamptz IS NULL OR (d.next_attempt_at, d.id) > ($2::timestamptz, $3::uuid))
    AND ${orderAllows('d', 'w')}
  ORDER BY d.next_attempt_at, d.id
  LIMIT $4`;

export const DELIVERY_SWEEP_STATEMENTS: Statement[] = [
  { method: 'DeliverySweepStore.due', sql: DUE_SQL },
];

/** A due delivery the sweeper found, with where the next page of the sweep starts. */
export interface SweptDelivery extends DeliveryRef {
  nextAttemptAt: Date;
}

/** The sweeper's read (docs/operations.md): deliveries due that no worker holds. */
@Injectable()
export class DeliverySweepStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Up to `limit` pending deliveries due for at least `dueForMs` and unleased (or whose lease
   * lapsed), by (next_attempt_at, id) after `after`: keyset pages over a large backlog.
   */
  async due(
    dueForMs: number,
    after: { at: Date; id: string } | null,
    limit: number,
  ): Promise<SweptDelivery[]> {
    const rows = await query<{ id: string; webhook_id: string; next_attempt_at: Date }>(
      this.db,
      DUE_SQL,
      [dueForMs, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows.map((r) => ({
      id: r.id,
      webhookId: r.webhook_id,
      nextAttemptAt: r.next_attempt_at,
    }));
  }
}
