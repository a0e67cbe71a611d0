import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, Repository } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { preparedQuery } from '../database/query';
import { SubscriptionEvent } from '../webhooks/subscription-events';
import { InboundEventEntity } from './inbound-event.entity';

/** A notification published in the statement that stores its inbound event. */
export interface InlineEvent {
  id: string;
  kind: SubscriptionEvent;
  createdAt: Date;
  /** `data` and `source` as jsonb text (toJsonb), and the body every delivery sends. */
  data: string;
  source: string;
  body: string;
}

/**
 * What the statement that stores an inbound event does with it: `done`, nothing more (no
 * route: it is the record only); `queue`, leave it unprocessed for the inbound queue (the
 * recording automation); `publish`, publish `event` with its deliveries as well, unless its
 * kind reaches more than INLINE_FANOUT_MAX active webhooks (then as `queue`).
 */
export type IngestPlan =
  { then: 'done' } | { then: 'queue' } | { then: 'publish'; event: InlineEvent };

export interface NewInboundEvent {
  id: string;
  event: string;
  identityKey: string;
  eventTs: number | null;
  accountId: string | null;
  /** The envelope as JSON text, its download token left out. */
  payload: string;
  plan: IngestPlan;
}

export interface StoredInboundEvent {
  id: string;
  /** Marked processed in the same statement (plans `done`, and `publish` within the cap). */
  processed: boolean;
  /** The deliveries it published, to be queued. */
  deliveryIds: string[];
}

/**
 * Most webhooks an event is fanned out to in the request that brought it. The platform wants
 * its answer within 3 s and a statement that writes thousands of rows would hold it; an event
 * whose kind reaches more is stored unprocessed and published from the inbound queue.
 */
export const INLINE_FANOUT_MAX = 100;

// One statement (one round trip, one commit) for a batch of events: the inbound rows and, for
// those published here, their events and a delivery per active webhook subscribed to the kind
// (the partial GIN index webhooks_active_events_idx serves `active AND events @> ARRAY[kind]`),
// all from one snapshot. A redelivery (taken identity) inserts nothing at all. `reach` counts
// each kind's webhooks only up to the cap. The event's idempotency key is the one the inbound
// job would publish under (publishKey), so a later run of the job adds nothing.
const INGEST_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[],
                         $6::jsonb[], $7::text[], $8::uuid[], $9::text[], $10::jsonb[],
                         $11::jsonb[], $12::timestamptz[], $13::text[])
      AS i(id, event, identity_key, event_ts, account_id, payload, plan, event_id, kind, data,
           source, created_at, body)
  ),
  reach AS (
    SELECT k.kind, (
      SELECT count(*) FROM (
        SELECT 1 FROM webhooks w WHERE w.active AND w.events @> ARRAY[k.kind] LIMIT $14 + 1
      ) capped
    ) AS webhooks
    FROM (SELECT DISTINCT kind FROM input WHERE plan = 'publish') k
  ),
  stored AS (
    INSERT INTO inbound_events (id, event, identity_key, event_ts, account_id, payload, processed_at)
    SELECT i.id, i.event, i.identity_key, i.event_ts, i.account_id, i.payload,
      CASE WHEN i.plan = 'done' OR (i.plan = 'publish' AND r.webhooks <= $14) THEN now() END
    FROM input i LEFT JOIN reach r ON r.kind = i.kind
    ON CONFLICT (identity_key) DO NOTHING
    RETURNING id, processed_at
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body)
    SELECT i.event_id, i.kind, i.data, i.source, 'inbound:' || i.id || ':' || i.kind,
      i.created_at, i.body
    FROM stored s JOIN input i ON i.id = s.id
    WHERE i.plan = 'publish' AND s.processed_at IS NOT NULL
    RETURNING id
  ),
  d AS (
    INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at)
    SELECT w.id, i.event_id, i.kind, now()
    FROM ev JOIN input i ON i.event_id = ev.id
    JOIN webhooks w ON w.active AND w.events @> ARRAY[i.kind]
    RETURNING id, event_id
  )
  SELECT s.id, s.processed_at IS NOT NULL AS processed,
    coalesce(array_agg(d.id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS delivery_ids
  FROM stored s JOIN input i ON i.id = s.id LEFT JOIN d ON d.event_id = i.event_id
  GROUP BY s.id, s.processed_at`;

interface StoredRow {
  id: string;
  processed: boolean;
  delivery_ids: string[];
}

/** SQLSTATE class 22, bad data (e.g. \u0000 in a string, which jsonb refuses). */
export function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * inbound_events: the durable record of every verified platform event (the injection token;
 * PgInboundEventStore is the real one).
 */
export abstract class InboundEventStore {
  /**
   * Stores the event unless one with the same identity is already stored, atomically, so
   * concurrent redeliveries cannot both win, and carries out its plan in the same statement.
   * Returns what was stored, or null for a duplicate (then nothing is written).
   */
  abstract insert(row: NewInboundEvent): Promise<StoredInboundEvent | null>;

  abstract findById(id: string): Promise<InboundEventEntity | null>;

  /** Marks the event done, unless it is already; `error` records why it was done without a notification. */
  abstract markProcessed(id: string, error?: string | null): Promise<void>;

  /** Records a failed processing attempt without finishing the event (the sweeper retries it). */
  abstract recordError(id: string, error: string): Promise<void>;

  /** Ids of the oldest unprocessed events received before `before`. */
  abstract findUnprocessed(before: Date, limit: number): Promise<string[]>;
}

@Injectable()
export class PgInboundEventStore extends InboundEventStore {
  // Concurrent requests share one statement (and one commit): the endpoint's hot path. Six at
  // most in flight, leaving connections of the pool to the workers' claims and records: with
  // fewer, each request waited for others' commits (2 gave 0.43× the minimal ingest, 6 0.55×);
  // past that, requests gather into larger batches instead of more commits.
  private readonly inserts = new MicroBatcher((rows: NewInboundEvent[]) => this.insertMany(rows), {
    maxInFlight: 6,
  });

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectRepository(InboundEventEntity) private readonly repo: Repository<InboundEventEntity>,
  ) {
    super();
  }

  /** ON CONFLICT keeps the first of concurrent redeliveries. */
  insert(row: NewInboundEvent): Promise<StoredInboundEvent | null> {
    return this.inserts.submit(row);
  }

  private async insertMany(
    rows: NewInboundEvent[],
  ): Promise<(StoredInboundEvent | null | Error)[]> {
    // Within one batch the first of several equal identities is the one stored.
    const first = new Map<string, number>();
    rows.forEach((row, i) => first.has(row.identityKey) || first.set(row.identityKey, i));
    const unique = [...first.values()].map((i) => rows[i]);
    const inline = (r: NewInboundEvent) => (r.plan.then === 'publish' ? r.plan.event : null);
    let stored: StoredRow[];
    try {
      stored = await preparedQuery<StoredRow>(this.db, 'inbound_ingest', INGEST_SQL, [
        unique.map((r) => r.id),
        unique.map((r) => r.event),
        unique.map((r) => r.identityKey),
        unique.map((r) => r.eventTs),
        unique.map((r) => r.accountId),
        unique.map((r) => r.payload),
        unique.map((r) => r.plan.then),
        unique.map((r) => inline(r)?.id ?? null),
        unique.map((r) => inline(r)?.kind ?? null),
        unique.map((r) => inline(r)?.data ?? null),
        unique.map((r) => inline(r)?.source ?? null),
        unique.map((r) => inline(r)?.createdAt ?? null),
        unique.map((r) => inline(r)?.body ?? null),
        INLINE_FANOUT_MAX,
      ]);
    } catch (error) {
      // One unstorable event must not fail the others that shared its statement.
      if (unique.length > 1 && isDataException(error)) {
        return Promise.all(
          rows.map((row) =>
            this.insertMany([row]).then(
              ([result]) => result,
              (rowError: Error) => rowError,
            ),
          ),
        );
      }
      throw error;
    }
    const byId = new Map(stored.map((r) => [r.id, r]));
    return rows.map((row, i) => {
      const r = first.get(row.identityKey) === i ? byId.get(row.id) : undefined;
      return r ? { id: r.id, processed: r.processed, deliveryIds: r.delivery_ids } : null;
    });
  }

  findById(id: string): Promise<InboundEventEntity | null> {
    return this.repo.findOneBy({ id });
  }

  async markProcessed(id: string, error: string | null = null): Promise<void> {
    await this.repo.update(
      { id, processedAt: IsNull() },
      { processedAt: new Date(), processError: error },
    );
  }

  async recordError(id: string, error: string): Promise<void> {
    await this.repo.update({ id }, { processError: error });
  }

  /** Served by the partial index inbound_events_unprocessed_idx. */
  async findUnprocessed(before: Date, limit: number): Promise<string[]> {
    const rows = await this.repo.find({
      select: { id: true },
      where: { processedAt: IsNull(), receivedAt: LessThan(before) },
      order: { receivedAt: 'ASC' },
      take: limit,
    });
    return rows.map((r) => r.id);
  }
}
