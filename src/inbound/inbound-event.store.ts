import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, Repository } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { EventSource, deliveryBody, toJsonb } from '../dispatcher/delivery-body';
import { DeliveryRoute, routesOf } from '../dispatcher/delivery.store';
import { preparedQuery, query } from '../database/query';
import { SubscriptionEvent, platformEventKind } from '../webhooks/subscription-events';
import { EventData } from './event-mapping';
import { InboundEventEntity } from './inbound-event.entity';

/** A notification published in the statement that stores its inbound event. */
export interface InlineEvent {
  id: string;
  kind: SubscriptionEvent;
  createdAt: Date;
  data: EventData;
  source: EventSource;
}

/**
 * What the statement that stores an inbound event does with it: `done`, nothing more (no
 * route: it is the record only); `queue`, leave it unprocessed for the inbound queue (the
 * recording automation, the approval rules); `publish`, publish `event` with its deliveries as
 * well, unless its kind reaches more than INLINE_FANOUT_MAX active webhooks (then as `queue`).
 * Whatever the plan, an event some active webhook subscribes to as it is (`zoom.<event>` or
 * `zoom.*`) is left unprocessed too: the inbound job publishes it as it is.
 */
export type IngestPlan =
  { then: 'done' } | { then: 'queue' } | { then: 'publish'; event: InlineEvent };

export interface NewInboundEvent {
  id: string;
  event: string;
  identityKey: string;
  eventTs: number | null;
  accountId: string | null;
  /**
   * The envelope, its download token left out: an object, or the request's own JSON text
   * when that is what is stored.
   */
  payload: Record<string, unknown> | string;
  /** The platform's x-zm-trackingid header, when sent. */
  trackingId: string | null;
  /** The top-level download_token, already encrypted (never stored in the clear). */
  downloadTokenEncrypted: string | null;
  plan: IngestPlan;
}

export interface StoredInboundEvent {
  id: string;
  /** Marked processed in the same statement (nothing is left for the inbound queue). */
  processed: boolean;
  /** The deliveries it published, to be queued. */
  deliveries: DeliveryRoute[];
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
// each kind's webhooks only up to the cap; `watched` holds the platform kinds (zoom.<event>)
// some active webhook takes as they are, directly or through zoom.*: such an event stays
// unprocessed for the inbound job, which publishes it as it is. The event's idempotency key is
// the one the inbound job would publish under (publishKey), so a later run of the job adds
// nothing. The download token is kept only on an event left unprocessed. Webhooks of API
// clients no longer in AUTH_CLIENTS ($18) count for nothing and get nothing, as in the
// dispatcher's fan-out (SPEC §9).
const INGEST_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::text[],
                         $6::jsonb[], $7::text[], $8::text[], $9::text[], $10::text[],
                         $11::uuid[], $12::text[], $13::jsonb[], $14::jsonb[], $15::timestamptz[],
                         $16::text[])
      AS i(id, event, identity_key, event_ts, account_id, payload, tracking_id,
           download_token_encrypted, as_is, plan, event_id, kind, data, source, created_at, body)
  ),
  reach AS (
    SELECT k.kind, (
      SELECT count(*) FROM (
        SELECT 1 FROM webhooks w
        WHERE w.active AND w.events @> ARRAY[k.kind] AND w.owner_client_id = ANY($18::text[])
        LIMIT $17 + 1
      ) capped
    ) AS webhooks
    FROM (SELECT DISTINCT kind FROM input WHERE plan = 'publish') k
  ),
  watched AS (
    SELECT a.as_is FROM (SELECT DISTINCT as_is FROM input WHERE as_is IS NOT NULL) a
    WHERE EXISTS (
      SELECT 1 FROM webhooks w WHERE w.active AND w.events && ARRAY[a.as_is, 'zoom.*']
        AND w.owner_client_id = ANY($18::text[]))
  ),
  planned AS (
    SELECT i.id, i.plan = 'publish' AND r.webhooks <= $17 AS publish,
      (i.plan = 'done' OR (i.plan = 'publish' AND r.webhooks <= $17)) AND wa.as_is IS NULL AS done
    FROM input i LEFT JOIN reach r ON r.kind = i.kind LEFT JOIN watched wa ON wa.as_is = i.as_is
  ),
  stored AS (
    INSERT INTO inbound_events (id, event, identity_key, event_ts, account_id, payload,
                                tracking_id, download_token_encrypted, processed_at)
    SELECT i.id, i.event, i.identity_key, i.event_ts, i.account_id, i.payload, i.tracking_id,
      CASE WHEN p.done THEN NULL ELSE i.download_token_encrypted END,
      CASE WHEN p.done THEN now() END
    FROM input i JOIN planned p ON p.id = i.id
    ON CONFLICT (identity_key) DO NOTHING
    RETURNING id, processed_at
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body)
    SELECT i.event_id, i.kind, i.data, i.source, 'inbound:' || i.id || ':' || i.kind,
      i.created_at, i.body
    FROM stored s JOIN input i ON i.id = s.id JOIN planned p ON p.id = s.id
    WHERE p.publish
    RETURNING id
  ),
  d AS (
    INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at)
    SELECT w.id, i.event_id, i.kind, now()
    FROM ev JOIN input i ON i.event_id = ev.id
    JOIN webhooks w ON w.active AND w.events @> ARRAY[i.kind]
      AND w.owner_client_id = ANY($18::text[])
    RETURNING id, event_id, webhook_id
  )
  SELECT s.id, s.processed_at IS NOT NULL AS processed,
    coalesce(array_agg(d.id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS delivery_ids,
    coalesce(array_agg(d.webhook_id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS webhook_ids
  FROM stored s JOIN input i ON i.id = s.id LEFT JOIN d ON d.event_id = i.event_id
  GROUP BY s.id, s.processed_at`;

interface StoredRow {
  id: string;
  processed: boolean;
  delivery_ids: string[];
  webhook_ids: string[];
}

/** An event that cannot even be serialised for its row (JSON.stringify threw). */
export class UnserialisableEventError extends Error {
  constructor(cause: unknown) {
    super(`event cannot be serialised: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'UnserialisableEventError';
  }
}

/** Bad data: SQLSTATE class 22 (e.g. \u0000 in a string, which jsonb refuses), or unserialisable. */
export function isDataException(error: unknown): boolean {
  if (error instanceof UnserialisableEventError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** The inline notification as it goes into the batch: its jsonb columns and its body. */
interface SerialisedInline {
  id: string;
  kind: SubscriptionEvent;
  createdAt: Date;
  data: string;
  source: string;
  body: string;
}

/** A row as it goes into the batch: serialised by its own caller. */
type SerialisedEvent = Omit<NewInboundEvent, 'payload' | 'plan'> & {
  payloadJson: string;
  then: IngestPlan['then'];
  inline: SerialisedInline | null;
};

/** Serialises one row; a row that cannot be fails alone (UnserialisableEventError). */
function serialise(row: NewInboundEvent): SerialisedEvent {
  const { payload, plan, ...columns } = row;
  try {
    const event = plan.then === 'publish' ? plan.event : null;
    return {
      ...columns,
      payloadJson: typeof payload === 'string' ? payload : JSON.stringify(payload),
      then: plan.then,
      inline: event && {
        id: event.id,
        kind: event.kind,
        createdAt: event.createdAt,
        data: toJsonb(event.data),
        source: toJsonb(event.source),
        body: deliveryBody(event),
      },
    };
  } catch (error) {
    throw new UnserialisableEventError(error);
  }
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

  /**
   * Marks the event done, unless it is already; `error` records why it was done without a
   * notification. The event's download token is dropped then: what still needs it has a copy.
   */
  abstract markProcessed(id: string, error?: string | null): Promise<void>;

  /** Whether any of the events stored under these identity keys is still unprocessed. */
  abstract anyUnprocessed(identityKeys: string[]): Promise<boolean>;

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
  private readonly inserts = new MicroBatcher((rows: SerialisedEvent[]) => this.insertMany(rows), {
    maxInFlight: 6,
  });

  private readonly clientIds: string[];

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectRepository(InboundEventEntity) private readonly repo: Repository<InboundEventEntity>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super();
    this.clientIds = config.auth.clients.map((c) => c.clientId);
  }

  /** ON CONFLICT keeps the first of concurrent redeliveries. */
  insert(row: NewInboundEvent): Promise<StoredInboundEvent | null> {
    // Serialised here, per caller: a row that cannot be fails its own insert, not the batch.
    let serialised: SerialisedEvent;
    try {
      serialised = serialise(row);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.inserts.submit(serialised);
  }

  private async insertMany(
    rows: SerialisedEvent[],
  ): Promise<(StoredInboundEvent | null | Error)[]> {
    // Within one batch the first of several equal identities is the one stored.
    const first = new Map<string, number>();
    rows.forEach((row, i) => first.has(row.identityKey) || first.set(row.identityKey, i));
    const unique = [...first.values()].map((i) => rows[i]);
    let stored: StoredRow[];
    try {
      stored = await preparedQuery<StoredRow>(this.db, 'inbound_ingest', INGEST_SQL, [
        unique.map((r) => r.id),
        unique.map((r) => r.event),
        unique.map((r) => r.identityKey),
        unique.map((r) => r.eventTs),
        unique.map((r) => r.accountId),
        unique.map((r) => r.payloadJson),
        unique.map((r) => r.trackingId),
        unique.map((r) => r.downloadTokenEncrypted),
        unique.map((r) => platformEventKind(r.event)),
        unique.map((r) => r.then),
        unique.map((r) => r.inline?.id ?? null),
        unique.map((r) => r.inline?.kind ?? null),
        unique.map((r) => r.inline?.data ?? null),
        unique.map((r) => r.inline?.source ?? null),
        unique.map((r) => r.inline?.createdAt ?? null),
        unique.map((r) => r.inline?.body ?? null),
        INLINE_FANOUT_MAX,
        this.clientIds,
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
      return r ? { id: r.id, processed: r.processed, deliveries: routesOf(r) } : null;
    });
  }

  findById(id: string): Promise<InboundEventEntity | null> {
    return this.repo.findOneBy({ id });
  }

  async markProcessed(id: string, error: string | null = null): Promise<void> {
    await this.repo.update(
      { id, processedAt: IsNull() },
      { processedAt: new Date(), processError: error, downloadTokenEncrypted: null },
    );
  }

  /** Served by the unique index on identity_key. */
  async anyUnprocessed(identityKeys: string[]): Promise<boolean> {
    const rows = await query<{ id: string }>(
      this.db,
      `SELECT id FROM inbound_events
       WHERE identity_key = ANY($1::text[]) AND processed_at IS NULL LIMIT 1`,
      [identityKeys],
    );
    return rows.length > 0;
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
