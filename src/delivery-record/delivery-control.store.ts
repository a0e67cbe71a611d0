import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';
import { EventKind } from '../webhooks/subscription-events';
import { EventSource, deliveryBody } from './delivery-body';
import { DELIVERY_COLUMNS, DeliveryRow, toDelivery } from './delivery-row';
import { DeliveryEntity } from './delivery.entity';
import { deliveryOrderSql } from './order-sql';
import { eventBodyJsonb, filterMatches } from './fan-out-filter';
import { receivesSql, receivingClients } from './fan-out-rule';
import { Statement } from './statement';

/** Deliveries created in [since, until) (until null: up to now) with `status`. */
export interface ReplayWindow {
  since: Date;
  until: Date | null;
  status: 'failed' | 'succeeded';
}

/** What a replay of missed events needs of its webhook. */
export interface ReplayTarget {
  id: string;
  events: string[];
  createdAt: Date;
}

/** Missed events are read and inserted this many at a time. */
const MISSED_BATCH = 500;

// A fresh series (docs/api.md#receiver-health): the attempt count goes on, the retry budget counts from here.
const FRESH_SERIES = `status = 'pending', series_start = attempt_count, next_attempt_at = now(),
  completed_at = NULL, requeued_by = $REQUEUE, requeued_at = now(), updated_at = now()`;

const REDELIVER_SQL = `
  UPDATE deliveries SET ${FRESH_SERIES.replace('$REQUEUE', `'redeliver'`)}
  WHERE id = $1 AND webhook_id = $2 AND status <> 'pending'
  RETURNING ${DELIVERY_COLUMNS}`;

const EXISTS_SQL = `SELECT id FROM deliveries WHERE id = $1 AND webhook_id = $2`;

// A replay shapes again with the webhook's template of now (docs/templates.md): the bytes a
// shaped delivery was sent are dropped; a redelivery keeps them.
const REPLAY_SQL = `
  UPDATE deliveries SET ${FRESH_SERIES.replace('$REQUEUE', `'replay'`)}, sent_body = NULL
  WHERE webhook_id = $1 AND status = $2 AND created_at >= $3
    AND ($4::timestamptz IS NULL OR created_at < $4)
  RETURNING id`;

// Events in the window that the webhook receives by the fan-out's rule (fan-out-rule.ts; $2
// the API clients), published after it was created, that it has no delivery of (it was
// inactive or disabled then). An event the filter of the time declined was never missed
// (docs/api.md): the filter in force when the event was published is read from the webhook's
// filter history (webhook_filters, kept by a trigger on webhooks), not the filter it has now.
// Keyset-paged by (created_at, id). has_body: the event carries the body its deliveries send
// (every event since the body moved there).
const MISSED_SQL = `
  SELECT e.id, e.kind, e.data, e.source, e.created_at, e.body IS NOT NULL AS has_body
  FROM events e JOIN webhooks w ON w.id = $1
  WHERE ${receivesSql({ webhook: 'w', kind: 'e.kind', clients: '$2::text[]', event: 'e' })}
    AND coalesce(
      (SELECT ${filterMatches('f', eventBodyJsonb('e'))} FROM webhook_filters f
       WHERE f.webhook_id = w.id AND f.valid_from <= e.created_at
       ORDER BY f.valid_from DESC LIMIT 1),
      ${filterMatches('w', eventBodyJsonb('e'))})
    AND e.created_at >= greatest($3::timestamptz, $4::timestamptz)
    AND ($5::timestamptz IS NULL OR e.created_at < $5)
    AND ($6::timestamptz IS NULL OR (e.created_at, e.id) > ($6::timestamptz, $7::uuid))
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = $1 AND d.event_id = e.id)
  ORDER BY e.created_at, e.id
  LIMIT $8`;

interface MissedEventRow {
  id: string;
  kind: EventKind;
  data: Record<string, unknown>;
  source: EventSource | null;
  created_at: Date;
  has_body: boolean;
}

// A replay racing another creates each missed delivery once: both take the webhook's lock
// first (REPLAY_LOCK_SQL), as no unique key can span the partitions (docs/operations.md#partitions). To
// a webhook with ordering 'meeting', they keep their events' ordering keys (docs/receiving.md#ordered-delivery-per-meeting).
const INSERT_MISSED_SQL = `
  INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at, requeued_by,
                          requeued_at, order_key, order_ts)
  SELECT $1, i.event_id, i.kind, i.body, now(), 'missed', now(),
    ${deliveryOrderSql('w', 'e')}
  FROM unnest($2::uuid[], $3::text[], $4::text[]) AS i(event_id, kind, body)
  JOIN events e ON e.id = i.event_id JOIN webhooks w ON w.id = $1
  WHERE NOT EXISTS (SELECT 1 FROM deliveries x WHERE x.webhook_id = $1 AND x.event_id = i.event_id)
  RETURNING id`;

const REPLAY_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('replay:' || $1::text))`;

const RECENT_TESTS_SQL = `
  SELECT created_at FROM deliveries
  WHERE webhook_id = $1 AND event = 'webhook.test' AND created_at > $2
  ORDER BY created_at DESC
  LIMIT $3`;

export const DELIVERY_CONTROL_STATEMENTS: Statement[] = [
  { method: 'PgDeliveryControlStore.redeliver', sql: REDELIVER_SQL },
  { method: 'PgDeliveryControlStore.redeliver (was it pending)', sql: EXISTS_SQL },
  { method: 'PgDeliveryControlStore.replay', sql: REPLAY_SQL },
  { method: 'PgDeliveryControlStore.createMissed (read)', sql: MISSED_SQL },
  { method: 'PgDeliveryControlStore.createMissed (lock)', sql: REPLAY_LOCK_SQL },
  { method: 'PgDeliveryControlStore.createMissed (insert)', sql: INSERT_MISSED_SQL },
  { method: 'PgDeliveryControlStore.recentTests', sql: RECENT_TESTS_SQL },
];

/** Redelivery, replay and the test limit's reads (PgDeliveryControlStore is the real one). */
export abstract class DeliveryControlStore {
  /**
   * Starts a fresh series for a final delivery of the webhook: the delivery, 'pending' when
   * it is pending already (nothing changed), null when the webhook has no such delivery.
   */
  abstract redeliver(
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryEntity | 'pending' | null>;

  /** Starts a fresh series for each delivery of the webhook in the window; their ids. */
  abstract replay(webhookId: string, window: ReplayWindow): Promise<string[]>;

  /** Creates a delivery for each event the webhook missed in the window; their ids. */
  abstract createMissed(webhook: ReplayTarget, window: ReplayWindow): Promise<string[]>;

  /** Creation times of the webhook's test deliveries after `since`, newest first, at most `limit`. */
  abstract recentTests(webhookId: string, since: Date, limit: number): Promise<Date[]>;
}

@Injectable()
export class PgDeliveryControlStore extends DeliveryControlStore {
  private readonly clientIds: string[];

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.clientIds = receivingClients(config);
  }

  async redeliver(
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryEntity | 'pending' | null> {
    const [row] = await query<DeliveryRow>(this.db, REDELIVER_SQL, [deliveryId, webhookId]);
    if (row) return toDelivery(row);
    const [exists] = await query<{ id: string }>(this.db, EXISTS_SQL, [deliveryId, webhookId]);
    return exists ? 'pending' : null;
  }

  async replay(webhookId: string, window: ReplayWindow): Promise<string[]> {
    const rows = await query<{ id: string }>(this.db, REPLAY_SQL, [
      webhookId,
      window.status,
      window.since,
      window.until,
    ]);
    return rows.map((r) => r.id);
  }

  async createMissed(webhook: ReplayTarget, window: ReplayWindow): Promise<string[]> {
    const created: string[] = [];
    let after: MissedEventRow | null = null;
    for (;;) {
      const events: MissedEventRow[] = await query<MissedEventRow>(this.db, MISSED_SQL, [
        webhook.id,
        this.clientIds,
        window.since,
        webhook.createdAt,
        window.until,
        after?.created_at ?? null,
        after?.id ?? null,
        MISSED_BATCH,
      ]);
      if (events.length === 0) break;
      // Only an event stored before bodies moved to events needs one on its delivery.
      const bodies = events.map((e) =>
        e.has_body ? null : deliveryBody({ ...e, createdAt: e.created_at, source: e.source }),
      );
      // The lock in a statement before the insert's, so that the insert's snapshot sees what
      // a replay that held it committed.
      const rows = await this.db.transaction(async (tx) => {
        const runner = tx.queryRunner!;
        await query(runner, REPLAY_LOCK_SQL, [webhook.id]);
        return query<{ id: string }>(runner, INSERT_MISSED_SQL, [
          webhook.id,
          events.map((e) => e.id),
          events.map((e) => e.kind),
          bodies,
        ]);
      });
      created.push(...rows.map((r) => r.id));
      if (events.length < MISSED_BATCH) break;
      after = events[events.length - 1];
    }
    return created;
  }

  async recentTests(webhookId: string, since: Date, limit: number): Promise<Date[]> {
    const rows = await query<{ created_at: Date }>(this.db, RECENT_TESTS_SQL, [
      webhookId,
      since,
      limit,
    ]);
    return rows.map((r) => r.created_at);
  }
}
