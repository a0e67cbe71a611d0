import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { preparedQuery, query } from '../database/query';
import { DESTINATIONS, type Destination } from '../destinations/registry';
import { EventKind } from '../webhooks/subscription-events';
import { DeliveryStatus } from './delivery.entity';
import { orderAllows, orderLate } from './order-sql';
import { Statement } from './statement';

/** A delivery and the webhook it goes to. */
export interface DeliveryRef {
  id: string;
  webhookId: string;
}

/** Deliveries from a row's `delivery_ids` and `webhook_ids`, aggregated in one order. */
export function deliveryRefsOf(row: {
  delivery_ids: string[];
  webhook_ids: string[];
}): DeliveryRef[] {
  return row.delivery_ids.map((id, i) => ({ id, webhookId: row.webhook_ids[i] }));
}

/** A delivery with what an attempt needs of its webhook. */
export interface DeliveryTarget {
  id: string;
  /**
   * Its created_at as PostgreSQL's text (exact, as a lease is): the key of its partition
   * (docs/operations.md#partitions). What updates the delivery later names it beside the id, so
   * that PostgreSQL reads the one partition that holds it, not each of them.
   */
  createdAt: string;
  event: EventKind;
  body: string;
  status: DeliveryStatus;
  attemptCount: number;
  /** attempt_count when the current series of attempts began (a redelivery starts one). */
  seriesStart: number;
  webhookId: string;
  /** The webhook's client: a broker destination must lie in its part of the broker. */
  ownerClientId: string;
  /** Where the attempt goes (docs/destinations.md); url is the http destination's, null for a broker. */
  destination: Destination;
  url: string | null;
  /** A chat destination's address, sealed (webhook-url): `url` is then its masked form. */
  urlEncrypted?: string | null;
  /** The webhook's template (docs/templates.md); null or absent when none. */
  template?: string | null;
  /**
   * The bytes this delivery was first sent when they were shaped (a template's output, a chat
   * tool's built-in message): its later attempts and redeliveries send them again. Null until
   * then, for one sent as its event's body, and after a replay (which shapes again).
   */
  sentBody?: string | null;
  secretEncrypted: string;
  /** The webhook's custom headers, sealed (webhook-headers); null when it has none. */
  headersEncrypted: string | null;
  /** The replaced secret and until when it still signs (docs/receiving.md); both null when none. */
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  active: boolean;
  consecutiveFailures: number;
  /** Its ordering key, when its webhook orders (docs/receiving.md#ordered-delivery-per-meeting): its end hands the key on. */
  orderKey?: string | null;
  /** An event of its key newer than its own was delivered already: sent marked as late. */
  late?: boolean;
  /** W3C traceparent its attempts' spans continue (docs/operations.md); null or absent when none. */
  traceContext?: string | null;
}

/** A delivery leased as it was stored, for the worker of the process that stored it. */
export interface LeasedDelivery {
  target: DeliveryTarget;
  /** Its lease_until as PostgreSQL wrote it (to the microsecond): the claim renews it by it. */
  lease: string;
}

/**
 * The webhook's columns an attempt needs (DeliveryTarget's webhook part), named once for
 * every statement that hands out a lease: the claim, and the ingest that leases deliveries as
 * it stores their event (src/inbound/inbound-event.store.ts).
 */
const TARGET_WEBHOOK_COLUMNS = [
  'owner_client_id',
  'destination',
  'url',
  'url_encrypted',
  'template',
  'secret_encrypted',
  'headers_encrypted',
  'previous_secret_encrypted',
  'previous_secret_expires_at',
  'active',
  'consecutive_failures',
] as const;

interface TargetWebhookRow {
  owner_client_id: string;
  destination: Destination;
  url: string | null;
  url_encrypted: string | null;
  template: string | null;
  secret_encrypted: string;
  headers_encrypted: string | null;
  previous_secret_encrypted: string | null;
  /** A Date as a column; its text inside JSON. */
  previous_secret_expires_at: Date | string | null;
  active: boolean;
  consecutive_failures: number;
}

/** The webhook's columns of a target, of the webhook aliased `w`, for a select list. */
export const targetWebhookColumns = (w: string): string =>
  TARGET_WEBHOOK_COLUMNS.map((column) => `${w}.${column}`).join(', ');

/**
 * A leased delivery (aliased `d`, its webhook `w`) as one JSON array, for a statement that
 * aggregates them per event: id, webhook id, lease, created_at, then the webhook's columns.
 */
export const leasedTargetJson = (d: string, w: string): string =>
  `json_build_array(${d}.id, ${d}.webhook_id, ${d}.lease_until::text, ${d}.created_at::text, ` +
  `${targetWebhookColumns(w)})`;
export type LeasedTargetJson = [
  id: string,
  webhookId: string,
  lease: string,
  createdAt: string,
  ...webhook: unknown[],
];

function webhookPartOf(row: TargetWebhookRow) {
  return {
    ownerClientId: row.owner_client_id,
    destination: row.destination,
    url: row.url,
    urlEncrypted: row.url_encrypted,
    template: row.template,
    secretEncrypted: row.secret_encrypted,
    headersEncrypted: row.headers_encrypted,
    previousSecretEncrypted: row.previous_secret_encrypted,
    previousSecretExpiresAt:
      row.previous_secret_expires_at === null ? null : new Date(row.previous_secret_expires_at),
    active: row.active,
    consecutiveFailures: row.consecutive_failures,
  };
}

/** A delivery leased as its event was stored (leasedTargetJson): fresh, at its first attempt. */
export function freshLeasedDelivery(
  [id, webhookId, lease, createdAt, ...webhook]: LeasedTargetJson,
  event: { kind: EventKind; body: string; traceContext: string | null },
): LeasedDelivery {
  const row = Object.fromEntries(
    TARGET_WEBHOOK_COLUMNS.map((column, i) => [column, webhook[i]]),
  ) as unknown as TargetWebhookRow;
  return {
    lease,
    target: {
      id,
      createdAt,
      event: event.kind,
      body: event.body,
      status: 'pending',
      attemptCount: 0,
      seriesStart: 0,
      webhookId,
      sentBody: null,
      traceContext: event.traceContext,
      ...webhookPartOf(row),
    },
  };
}

interface DeliveryTargetRow extends TargetWebhookRow {
  id: string;
  created_at: string;
  event: EventKind;
  body: string;
  status: DeliveryStatus;
  attempt_count: number;
  series_start: number;
  webhook_id: string;
  sent_body: string | null;
  order_key: string | null;
  late: boolean;
  trace_context: string | null;
}

function toTarget(row: DeliveryTargetRow): DeliveryTarget {
  return {
    id: row.id,
    createdAt: row.created_at,
    event: row.event,
    body: row.body,
    status: row.status,
    attemptCount: row.attempt_count,
    seriesStart: row.series_start,
    webhookId: row.webhook_id,
    sentBody: row.sent_body,
    orderKey: row.order_key,
    late: row.late,
    traceContext: row.trace_context,
    ...webhookPartOf(row),
  };
}

// Leases those of the given deliveries that are pending, due (a second's leeway for a delayed
// job that fires early) and held by no live worker, and returns what their attempts need. One
// held elsewhere, already final, not yet due or gone (deleted with its webhook) is skipped: so
// a delivery queued twice (the sweeper, a retried job) is still sent once at a time. A lease
// this worker holds already (taken when the delivery was stored: $3, the leases as the ingest
// statement returned them) is renewed: no other lease can end on the same microsecond. A
// delivery to an ordered webhook is leased only when its turn has come (docs/receiving.md#ordered-delivery-per-meeting), whoever
// offers it: the order holds across workers whatever their memory says.
const CLAIM_SQL = `
  UPDATE deliveries d SET lease_until = now() + make_interval(secs => $2::int / 1000.0)
  FROM webhooks w, events e
  WHERE d.id = ANY($1::uuid[]) AND w.id = d.webhook_id AND e.id = d.event_id
    AND d.status = 'pending'
    AND d.next_attempt_at <= now() + interval '1 second'
    AND (d.lease_until IS NULL OR d.lease_until <= now()
         OR d.lease_until = ANY($3::timestamptz[]))
    AND ${orderAllows('d', 'w')}
  RETURNING d.id, d.created_at::text AS created_at, d.event, coalesce(d.body, e.body) AS body,
    d.status, d.attempt_count, d.series_start, d.webhook_id, ${targetWebhookColumns('w')},
    d.trace_context, d.sent_body,
    CASE WHEN w.ordering = 'meeting' THEN d.order_key END AS order_key,
    ${orderLate('d', 'w')} AS late`;

// The attempt rows and the deliveries' new states, for a batch of attempts, in one statement.
// An update only applies while its delivery is pending at the attempt count the worker started
// from, and an attempt is inserted only if its update applied: a worker that lost the delivery
// (webhook deleted, or another worker recorded this attempt first) records nothing. Each
// delivery is found by its id and created_at; the list of those ($11) is what lets the planner
// read only their partitions (a join's pairs prune nothing).
const RECORD_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::text[],
                         $6::timestamptz[], $7::timestamptz[], $8::int[], $9::text[], $10::text[],
                         $11::timestamptz[])
      AS i(id, attempt, status, status_code, error, next_attempt_at, started_at, duration_ms,
           response_body, sent_body, created_at)
  ),
  updated AS (
    UPDATE deliveries d SET
      attempt_count = i.attempt,
      status = i.status,
      last_status_code = i.status_code,
      last_error = i.error,
      next_attempt_at = i.next_attempt_at,
      completed_at = CASE WHEN i.status = 'pending' THEN NULL ELSE now() END,
      lease_until = NULL,
      sent_body = coalesce(i.sent_body, d.sent_body),
      updated_at = now()
    FROM input i
    WHERE d.id = i.id AND d.created_at = i.created_at AND d.created_at = ANY($11::timestamptz[])
      AND d.status = 'pending' AND d.attempt_count = i.attempt - 1
    RETURNING d.id
  )
  INSERT INTO delivery_attempts
    (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
  SELECT i.id, i.attempt, i.started_at, i.duration_ms, i.status_code, i.error, i.response_body
  FROM input i JOIN updated u ON u.id = i.id
  RETURNING delivery_id`;

// Gives up leases taken when the deliveries were stored and not used (a worker that stops, or
// a lane with no room): another worker may claim them at once instead of when they lapse.
// Their created_at ($3) keeps the statement to their partitions.
const RELEASE_SQL = `
  UPDATE deliveries SET lease_until = NULL
  WHERE id = ANY($1::uuid[]) AND created_at = ANY($3::timestamptz[])
    AND lease_until = ANY($2::timestamptz[]) AND status = 'pending'`;

const CANCEL_SQL = `
  UPDATE deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL,
    lease_until = NULL, completed_at = now(), updated_at = now()
  WHERE id = $1 AND created_at = $3 AND status = 'pending'
  RETURNING id`;

// The limits of docs/api.md#receiver-health of the given webhooks; max_in_flight null is the
// default ($2); a chat webhook's (types $3) rate_limit null is one a second, as the tools ask
// (docs/destinations.md#chat-tools).
const LIMITS_SQL = `
  SELECT id, coalesce(max_in_flight, $2) AS max_in_flight,
    coalesce(rate_limit, CASE WHEN destination->>'type' = ANY($3::text[]) THEN 1 END) AS rate_limit
  FROM webhooks
  WHERE id = ANY($1::uuid[])`;

// A webhook's pending, due, unleased deliveries, oldest first, but those already waiting in
// the scheduler ($3): what a lane that let a backlog go reads back as it drains. The partial
// index deliveries_due_idx holds pending deliveries only. Of a key of an ordered webhook,
// only its head (docs/receiving.md#ordered-delivery-per-meeting).
const DUE_SQL = `
  SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.webhook_id = $1 AND d.status = 'pending' AND d.next_attempt_at <= now()
    AND (d.lease_until IS NULL OR d.lease_until <= now()) AND NOT (d.id = ANY($3::uuid[]))
    AND ${orderAllows('d', 'w')}
  ORDER BY d.next_attempt_at
  LIMIT $2`;

/** What an attempt's record keeps of its outcome (the sender's AttemptResult carries it). */
export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  startedAt: Date;
  durationMs: number;
}

/** A webhook's limits (docs/api.md#receiver-health), as the scheduler applies them. */
export interface WebhookLimit {
  maxInFlight: number;
  /** Attempts started per second at most; null: none. */
  rateLimit: number | null;
}

export interface AttemptRecord {
  deliveryId: string;
  /** The delivery's created_at (DeliveryTarget.createdAt): its partition. */
  createdAt: string;
  attempt: number;
  result: AttemptOutcome;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  /** The shaped bytes sent, kept for later attempts (DeliveryTarget.sentBody); null: none. */
  sentBody?: string | null;
}

export const DELIVERY_STORE_STATEMENTS: Statement[] = [
  { method: 'PgDeliveryStore.claim', prepared: 'delivery_claim', sql: CLAIM_SQL },
  { method: 'PgDeliveryStore.recordAttempt', prepared: 'delivery_record', sql: RECORD_SQL },
  { method: 'PgDeliveryStore.release', sql: RELEASE_SQL },
  { method: 'PgDeliveryStore.cancel', sql: CANCEL_SQL },
  { method: 'PgDeliveryStore.limits', sql: LIMITS_SQL },
  { method: 'PgDeliveryStore.due', sql: DUE_SQL },
];

/** A delivery attempt's reads and writes (the injection token; PgDeliveryStore is the real one). */
export abstract class DeliveryStore {
  /**
   * Leases, for `leaseMs`, those of `deliveryIds` that are pending, due and held by no other
   * worker (or held under one of `ownLeases`, which this worker took when it stored them), and
   * returns them with their webhooks. The sweeper leaves a leased delivery alone;
   * recording its attempt (or cancelling it) ends the lease.
   */
  abstract claim(
    deliveryIds: string[],
    leaseMs: number,
    ownLeases?: string[],
  ): Promise<DeliveryTarget[]>;

  /**
   * Ends the given leases (as the ingest statement returned them) of pending deliveries;
   * `createdAts` are theirs (DeliveryTarget.createdAt), in any order.
   */
  abstract release(deliveryIds: string[], leases: string[], createdAts: string[]): Promise<void>;

  /**
   * Records an attempt and the delivery's resulting state, only while the delivery is pending
   * at attempt - 1 attempts; false when it had moved on meanwhile (nothing is written then).
   */
  abstract recordAttempt(record: AttemptRecord): Promise<boolean>;

  /** Ends a pending delivery as failed without sending it; false when it was not pending. */
  abstract cancel(
    delivery: Pick<DeliveryTarget, 'id' | 'createdAt'>,
    reason: string,
  ): Promise<boolean>;

  /** The webhooks' limits (docs/api.md#receiver-health), max_in_flight unset being `defaultMaxInFlight`. */
  abstract limits(
    webhookIds: string[],
    defaultMaxInFlight: number,
  ): Promise<Map<string, WebhookLimit>>;

  /** Up to `limit` of the webhook's pending, due, unleased deliveries not in `excluding`. */
  abstract due(webhookId: string, limit: number, excluding: string[]): Promise<string[]>;
}

/**
 * A claim serves a whole job's deliveries, and the attempt records of concurrent attempts are
 * batched (see MicroBatcher): at full load a few statements serve hundreds of deliveries.
 */
@Injectable()
export class PgDeliveryStore extends DeliveryStore {
  private readonly records = new MicroBatcher<AttemptRecord, boolean>(
    (records) => this.recordMany(records),
    // One at a time: no slot waits on a record (it is freed once the request is over), so
    // records gather into fewer, larger statements at no cost to throughput.
    { keyOf: (record) => record.deliveryId, maxInFlight: 1 },
  );

  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async claim(
    deliveryIds: string[],
    leaseMs: number,
    ownLeases: string[] = [],
  ): Promise<DeliveryTarget[]> {
    const rows = await preparedQuery<DeliveryTargetRow>(this.db, 'delivery_claim', CLAIM_SQL, [
      deliveryIds,
      leaseMs,
      ownLeases,
    ]);
    return rows.map(toTarget);
  }

  async release(deliveryIds: string[], leases: string[], createdAts: string[]): Promise<void> {
    await query(this.db, RELEASE_SQL, [deliveryIds, leases, createdAts]);
  }

  recordAttempt(record: AttemptRecord): Promise<boolean> {
    return this.records.submit(record);
  }

  private async recordMany(records: AttemptRecord[]): Promise<boolean[]> {
    const column = <T>(pick: (r: AttemptRecord) => T) => records.map(pick);
    const rows = await preparedQuery<{ delivery_id: string }>(
      this.db,
      'delivery_record',
      RECORD_SQL,
      [
        column((r) => r.deliveryId),
        column((r) => r.attempt),
        column((r) => r.status),
        column((r) => r.result.statusCode),
        column((r) => r.result.error),
        column((r) => r.nextAttemptAt),
        column((r) => r.result.startedAt),
        column((r) => r.result.durationMs),
        column((r) => r.result.responseBody),
        column((r) => r.sentBody ?? null),
        column((r) => r.createdAt),
      ],
    );
    const written = new Set(rows.map((r) => r.delivery_id));
    return records.map((r) => written.has(r.deliveryId));
  }

  async cancel(
    delivery: Pick<DeliveryTarget, 'id' | 'createdAt'>,
    reason: string,
  ): Promise<boolean> {
    const rows = await query<{ id: string }>(this.db, CANCEL_SQL, [
      delivery.id,
      reason,
      delivery.createdAt,
    ]);
    return rows.length > 0;
  }

  async limits(
    webhookIds: string[],
    defaultMaxInFlight: number,
  ): Promise<Map<string, WebhookLimit>> {
    const rows = await query<{ id: string; max_in_flight: number; rate_limit: number | null }>(
      this.db,
      LIMITS_SQL,
      [webhookIds, defaultMaxInFlight, DESTINATIONS.chatTypes],
    );
    return new Map(
      rows.map((r) => [r.id, { maxInFlight: r.max_in_flight, rateLimit: r.rate_limit }]),
    );
  }

  async due(webhookId: string, limit: number, excluding: string[]): Promise<string[]> {
    const rows = await query<{ id: string }>(this.db, DUE_SQL, [webhookId, limit, excluding]);
    return rows.map((r) => r.id);
  }
}
