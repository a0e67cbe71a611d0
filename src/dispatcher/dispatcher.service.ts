import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';
import { QUEUES } from '../queue/queue.constants';
import { TEST_EVENT, isSubscriptionEvent } from '../webhooks/subscription-events';
import { EventSource, deliveryBody } from './delivery-body';
import { MicroBatcher } from '../common/micro-batch';
import { deliverJob } from './delivery-job';
import { DeliveryEntity, DeliveryStatus } from './delivery.entity';

export interface PublishInput {
  /** A SUBSCRIPTION_EVENTS kind (src/webhooks/subscription-events.ts). */
  kind: string;
  data: Record<string, unknown>;
  source?: EventSource | null;
  /** Same key => the same event, no second fan-out (events.idempotency_key is UNIQUE). */
  idempotencyKey?: string;
}

export interface PublishResult {
  eventId: string;
  deliveryIds: string[];
}

/**
 * JSON for a jsonb column. jsonb cannot hold U+0000, which a meeting topic or a name may carry;
 * the record keeps U+FFFD there, while the body (text) sends the exact characters.
 */
function toJsonb(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? v.replaceAll('\u0000', '\uFFFD') : v,
  );
}

/** Longest a publish waits for Redis; past it the sweeper queues the deliveries instead. */
const ENQUEUE_TIMEOUT_MS = 2000;

// One statement (one round trip, one implicit transaction) for a batch of events: each event
// and a delivery per active webhook subscribed to its kind (the partial GIN index
// webhooks_active_events_idx serves `active AND events @> ARRAY[kind]`). An event whose
// idempotency key is taken inserts nothing and is missing from the result. Each body is
// bound once and copied into the rows of its deliveries.
const FAN_OUT_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[],
                         $6::timestamptz[], $7::text[])
      AS i(id, kind, data, source, idempotency_key, created_at, body)
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, idempotency_key, created_at)
    SELECT id, kind, data, source, idempotency_key, created_at FROM input
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id
  ),
  d AS (
    INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at)
    SELECT w.id, i.id, i.kind, i.body, now()
    FROM ev JOIN input i ON i.id = ev.id
    JOIN webhooks w ON w.active AND w.events @> ARRAY[i.kind]
    RETURNING id, event_id
  )
  SELECT ev.id, array_remove(array_agg(d.id::text), NULL) AS delivery_ids
  FROM ev LEFT JOIN d ON d.event_id = ev.id
  GROUP BY ev.id`;

interface NewEvent {
  id: string;
  kind: string;
  createdAt: Date;
  data: Record<string, unknown>;
  source: EventSource | null;
  idempotencyKey: string | null;
}

const EXISTING_EVENT_SQL = `
  SELECT e.id, coalesce(array_agg(d.id::text ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL), '{}'::text[])
    AS delivery_ids
  FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
  WHERE e.idempotency_key = $1
  GROUP BY e.id`;

// The test event goes to its one webhook, and only while that webhook is active.
const TEST_SQL = `
  WITH w AS (SELECT id FROM webhooks WHERE id = $1 AND active),
  ev AS (
    INSERT INTO events (id, kind, data, source, created_at)
    SELECT $2, $3, $4, NULL, $5 FROM w
    RETURNING id
  )
  INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at)
  SELECT $1, ev.id, $3, $6, now() FROM ev
  RETURNING id, webhook_id, event_id, event, body, status, attempt_count, next_attempt_at,
    last_status_code, last_error, created_at, updated_at, completed_at`;

/**
 * The one entry point for notifications: stores the event and its deliveries in PostgreSQL
 * (the record), then queues them. Queueing is best effort; the sweeper re-queues whatever
 * the queue did not get.
 */
@Injectable()
export class DispatcherService {
  private readonly logger = new Logger(DispatcherService.name);
  // Concurrent publishes (inbound workers, many at once) share one statement and one commit.
  private readonly fanOuts = new MicroBatcher<NewEvent, string[] | null>(
    (events) => this.fanOutMany(events),
    { keyOf: (event) => event.idempotencyKey ?? event.id },
  );

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Queue,
  ) {}

  async publish(input: PublishInput): Promise<PublishResult> {
    if (!isSubscriptionEvent(input.kind)) {
      throw new Error(`publish: "${input.kind}" is not a subscription event kind`);
    }
    const event: NewEvent = {
      id: randomUUID(),
      kind: input.kind,
      createdAt: new Date(),
      data: input.data,
      source: input.source ?? null,
      idempotencyKey: input.idempotencyKey ?? null,
    };
    const deliveryIds = await this.fanOuts.submit(event);
    if (deliveryIds === null) {
      const existing = await this.findByIdempotencyKey(input.idempotencyKey!);
      if (!existing) throw new Error('publish: idempotency key conflict, but no event holds it');
      // Already published: queue again what it created (a no-op for jobs still queued), in
      // case the first publisher died between its commit and its queueing.
      await this.enqueue(existing.deliveryIds);
      return existing;
    }
    await this.enqueue(deliveryIds);
    return { eventId: event.id, deliveryIds };
  }

  /** The fan-out of the events published in one event-loop turn; null for a taken key. */
  private async fanOutMany(events: NewEvent[]): Promise<(string[] | null)[]> {
    const column = <T>(pick: (e: NewEvent) => T) => events.map(pick);
    const rows = await preparedQuery<{ id: string; delivery_ids: string[] }>(
      this.db,
      'dispatcher_fan_out',
      FAN_OUT_SQL,
      [
        column((e) => e.id),
        column((e) => e.kind),
        column((e) => toJsonb(e.data)),
        column((e) => (e.source === null ? null : toJsonb(e.source))),
        column((e) => e.idempotencyKey),
        column((e) => e.createdAt),
        column((e) => deliveryBody(e)),
      ],
    );
    const inserted = new Map(rows.map((r) => [r.id, r.delivery_ids]));
    return events.map((e) => inserted.get(e.id) ?? null);
  }

  /**
   * Publishes a `webhook.test` event to one webhook. Returns the delivery as it was queued, or
   * null when the webhook is not (or no longer) active.
   */
  async publishTest(webhook: { id: string }): Promise<DeliveryEntity | null> {
    const event = {
      id: randomUUID(),
      kind: TEST_EVENT,
      createdAt: new Date(),
      data: {
        webhook_id: webhook.id,
        message: 'Test notification sent from POST /api/webhooks/{id}/test',
      },
      source: null,
    };
    const rows: Record<string, unknown>[] = await this.db.query(TEST_SQL, [
      webhook.id,
      event.id,
      event.kind,
      JSON.stringify(event.data),
      event.createdAt,
      deliveryBody(event),
    ]);
    if (rows.length === 0) return null;
    const delivery = this.db.getRepository(DeliveryEntity).create({
      id: rows[0].id as string,
      webhookId: rows[0].webhook_id as string,
      eventId: rows[0].event_id as string,
      event: rows[0].event as string,
      body: rows[0].body as string,
      status: rows[0].status as DeliveryStatus,
      attemptCount: rows[0].attempt_count as number,
      nextAttemptAt: rows[0].next_attempt_at as Date | null,
      lastStatusCode: rows[0].last_status_code as number | null,
      lastError: rows[0].last_error as string | null,
      createdAt: rows[0].created_at as Date,
      updatedAt: rows[0].updated_at as Date,
      completedAt: rows[0].completed_at as Date | null,
    });
    await this.enqueue([delivery.id]);
    return delivery;
  }

  /** The kind and data of the event published under `idempotencyKey`, if one was. */
  async published(
    idempotencyKey: string,
  ): Promise<{ kind: string; data: Record<string, unknown> } | null> {
    const rows: { kind: string; data: Record<string, unknown> }[] = await this.db.query(
      'SELECT kind, data FROM events WHERE idempotency_key = $1',
      [idempotencyKey],
    );
    return rows[0] ?? null;
  }

  private async findByIdempotencyKey(key: string): Promise<PublishResult | null> {
    const rows: { id: string; delivery_ids: string[] }[] = await this.db.query(EXISTING_EVENT_SQL, [
      key,
    ]);
    return rows[0] ? { eventId: rows[0].id, deliveryIds: rows[0].delivery_ids } : null;
  }

  private async enqueue(deliveryIds: string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    const adding = this.queue.addBulk(deliveryIds.map(deliverJob));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer from Redis within ${ENQUEUE_TIMEOUT_MS} ms`)),
        ENQUEUE_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([adding, timeout]);
    } catch (error) {
      // The deliveries are committed; the sweeper queues them once they are due and missing.
      adding.catch(() => undefined);
      this.logger.warn(
        `could not queue ${deliveryIds.length} deliveries (${(error as Error).message}); ` +
          'the sweeper will queue them',
      );
    } finally {
      clearTimeout(timer);
    }
  }
}
