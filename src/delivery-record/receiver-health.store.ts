import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';
import { WebhookDisabledReason } from '../webhooks/webhook.entity';
import { Statement } from './statement';

const COUNT_FAILURE_SQL = `UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 WHERE id = $1
       RETURNING consecutive_failures`;

const RESET_FAILURES_SQL = `UPDATE webhooks SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0`;

// Disabling and failing the webhook's pending deliveries is one statement: a delivery queued
// between the two could otherwise stay pending on a disabled webhook.
const DISABLE_SQL = `
  WITH w AS (
    UPDATE webhooks SET active = false, disabled_reason = $2, disabled_at = now(),
      updated_at = now()
    WHERE id = $1 AND active
    RETURNING id
  ),
  f AS (
    UPDATE deliveries d SET status = 'failed', last_error = $3, next_attempt_at = NULL,
      completed_at = now(), updated_at = now()
    FROM w WHERE d.webhook_id = w.id AND d.status = 'pending'
    RETURNING d.id
  )
  SELECT (SELECT count(*) FROM w)::int AS disabled, (SELECT count(*) FROM f)::int AS failed`;

export const RECEIVER_HEALTH_STATEMENTS: Statement[] = [
  { method: 'PgReceiverHealthStore.countFailure', sql: COUNT_FAILURE_SQL },
  { method: 'PgReceiverHealthStore.resetFailures', sql: RESET_FAILURES_SQL },
  { method: 'PgReceiverHealthStore.disable', sql: DISABLE_SQL },
];

/** A webhook's run of failed deliveries and its disabling (PgReceiverHealthStore is real). */
export abstract class ReceiverHealthStore {
  /** Adds a failed delivery to the webhook's run; resolves to the run's new length. */
  abstract countFailure(webhookId: string): Promise<number>;

  /** A delivery succeeded: the run starts afresh. */
  abstract resetFailures(webhookId: string): Promise<void>;

  /**
   * Disables an active webhook for `reason` and ends its pending deliveries failed with
   * `error`; resolves to how many it ended, or null when the webhook was not active.
   */
  abstract disable(
    webhookId: string,
    reason: WebhookDisabledReason,
    error: string,
  ): Promise<number | null>;
}

@Injectable()
export class PgReceiverHealthStore extends ReceiverHealthStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async countFailure(webhookId: string): Promise<number> {
    const [row] = await query<{ consecutive_failures: number }>(this.db, COUNT_FAILURE_SQL, [
      webhookId,
    ]);
    return row?.consecutive_failures ?? 0;
  }

  async resetFailures(webhookId: string): Promise<void> {
    await query(this.db, RESET_FAILURES_SQL, [webhookId]);
  }

  async disable(
    webhookId: string,
    reason: WebhookDisabledReason,
    error: string,
  ): Promise<number | null> {
    const [row] = await query<{ disabled: number; failed: number }>(this.db, DISABLE_SQL, [
      webhookId,
      reason,
      error,
    ]);
    return row.disabled > 0 ? row.failed : null;
  }
}
