import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DeliveryStatus } from './delivery.entity';
import { AttemptResult } from './delivery-sender.service';

/** A delivery with what an attempt needs of its webhook. */
export interface DeliveryTarget {
  id: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  attemptCount: number;
  webhookId: string;
  url: string;
  secretEncrypted: string;
  active: boolean;
}

const LOAD_SQL = `
  SELECT d.id, d.event, d.body, d.status, d.attempt_count, d.webhook_id,
         w.url, w.secret_encrypted, w.active
  FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.id = $1`;

// The attempt row and the delivery's new state in one statement. The update only applies
// while the delivery is pending at the attempt count the worker started from, and the attempt
// is inserted only if the update applied: a worker that lost the delivery (webhook deleted,
// or another worker recorded this attempt first) records nothing.
const RECORD_SQL = `
  WITH d AS (
    UPDATE deliveries SET
      attempt_count = $2,
      status = $3,
      last_status_code = $4,
      last_error = $5,
      next_attempt_at = $6,
      completed_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END,
      updated_at = now()
    WHERE id = $1 AND status = 'pending' AND attempt_count = $2 - 1
    RETURNING id
  )
  INSERT INTO delivery_attempts
    (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
  SELECT d.id, $2, $7, $8, $4, $5, $9 FROM d
  RETURNING id`;

const CANCEL_SQL = `
  WITH d AS (
    UPDATE deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL,
      completed_at = now(), updated_at = now()
    WHERE id = $1 AND status = 'pending'
    RETURNING id
  )
  SELECT id FROM d`;

/** The processor's reads and writes of deliveries: one statement each. */
@Injectable()
export class DeliveryStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async load(deliveryId: string): Promise<DeliveryTarget | null> {
    const rows: Record<string, unknown>[] = await this.db.query(LOAD_SQL, [deliveryId]);
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id as string,
      event: row.event as string,
      body: row.body as string,
      status: row.status as DeliveryStatus,
      attemptCount: row.attempt_count as number,
      webhookId: row.webhook_id as string,
      url: row.url as string,
      secretEncrypted: row.secret_encrypted as string,
      active: row.active as boolean,
    };
  }

  /**
   * Records attempt number `attempt` and the delivery's resulting state; false when the
   * delivery had moved on meanwhile (nothing is written then).
   */
  async recordAttempt(
    deliveryId: string,
    attempt: number,
    result: AttemptResult,
    next: { status: DeliveryStatus; nextAttemptAt: Date | null },
  ): Promise<boolean> {
    const rows: unknown[] = await this.db.query(RECORD_SQL, [
      deliveryId,
      attempt,
      next.status,
      result.statusCode,
      result.error,
      next.nextAttemptAt,
      result.startedAt,
      result.durationMs,
      result.responseBody,
    ]);
    return rows.length > 0;
  }

  /** Ends a pending delivery without sending it (its webhook was deactivated). */
  async cancel(deliveryId: string, reason: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(CANCEL_SQL, [deliveryId, reason]);
    return rows.length > 0;
  }
}
