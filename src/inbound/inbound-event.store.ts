import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { Between, DataSource, IsNull, LessThan, Repository } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { parsePrecise, stringifyPrecise } from '../common/precise-json';
import { storableText } from '../common/unicode';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { bodyOfSerialised, jsonbOfSerialised } from '../delivery-record/delivery-body';
import { fanOutPart } from '../delivery-record/fan-out-part';
import {
  DeliveryRef,
  LeasedDelivery,
  LeasedTargetJson,
  deliveryRefsOf,
  freshLeasedDelivery,
  leasedTargetJson,
} from '../delivery-record/delivery.store';
import {
  holdingSql,
  receivingClients,
  receivingWebhooksSql,
  ruleSourceSql,
  subscriptionsSql,
} from '../delivery-record/fan-out-rule';
import { preparedQuery, query } from '../database/query';
import type { Statement } from '../delivery-record/statement';
import { SubscriptionEvent, platformEventKind } from '../webhooks/subscription-events';
import { InboundEventEntity } from './inbound-event.entity';
import { IngestPlan, inboundEventKey } from './inbound-job';
import type { InboundVia } from '../common/inbound-via';

export interface NewInboundEvent {
  id: string;
  event: string;
  identityKey: string;
  eventTs: number | null;
  accountId: string | null;
  /**
   * The envelope, its download token left out: an object, or the request's own bytes when that
   * is what is stored (then one whole JSON value in valid UTF-8, as JSON.parse took it: the
   * batch embeds it as it is).
   */
  payload: Record<string, unknown> | Buffer;
  /**
   * The request's bytes (without the download token) when `payload` is not them as they came:
   * what jsonb could not hold is replaced there (storedPayload in inbound.service.ts).
   */
  rawBody?: Buffer | null;
  /** The platform's x-zm-trackingid header, when sent. */
  trackingId: string | null;
  /** How it came (docs/inbound-sources.md). */
  via: InboundVia;
  /** The top-level download_token, already encrypted (never stored in the clear). */
  downloadTokenEncrypted: string | null;
  plan: IngestPlan;
  /**
   * W3C traceparent of the span its deliveries (and the inbound job) continue: the publish
   * span, or the request's when nothing is published here. Null or absent while tracing is off.
   */
  traceContext?: string | null;
  /**
   * Lease the deliveries published here for this long, for this process's own worker (null: no
   * lease, they go through the queue). See DispatcherService.preLeaseMs.
   */
  leaseMs: number | null;
}

export interface StoredInboundEvent {
  id: string;
  /** Marked processed in the same statement (nothing is left for the inbound queue). */
  processed: boolean;
  /** The deliveries it published, to be queued. */
  deliveries: DeliveryRef[];
  /** Those of them leased as they were stored (`leaseMs`), with what their attempts need. */
  leased: LeasedDelivery[];
}

/**
 * Most webhooks an event is fanned out to in the request that brought it. The platform wants
 * its answer within 3 s and a statement that writes thousands of rows would hold it; an event
 * that reaches more (its kind's webhooks whose owners hold its account, filters aside) is stored
 * unprocessed and published from the inbound queue.
 */
export const INLINE_FANOUT_MAX = 100;

// One statement (one round trip, one commit) for a batch of events: the inbound rows and, for
// those published here, their events and a delivery per webhook the record's fan-out rule
// (delivery-record/fan-out-rule.ts) selects, all from one snapshot. A redelivery (taken identity) inserts nothing
// at all. `matched` holds each event's webhooks by the rule, filters aside, only up to the cap,
// and `reach` counts them: by the event's account, since with many platform accounts a kind may
// have thousands of webhooks while an event of one account reaches a few (counting by kind
// alone sent every such event through the inbound queue). Both find the webhooks from the
// clients holding the event's account (receivingWebhooksSql, over `holding`: the configured
// holdings, read once per statement) rather than from every webhook of the kind; the fan-out
// part then applies only the filters to those pairs (docs/benchmarks.md#many-platform-accounts).
// `watched` holds the platform kinds
// (zoom.<event>) some active webhook whose owner holds the account takes as they are, directly or
// through zoom.*: such an event stays unprocessed for the inbound job, which publishes it as it is.
// It looks for holders only for the kinds some active webhook takes at all (`taken`, one probe
// of the kind's index a kind): a batch of 50 accounts' events is 50 pairs of kind and account. The event's
// idempotency key (inboundEventKey, in the input) is the one the inbound job would publish under,
// so a later run of the job adds nothing. The download token is kept only on an event left
// unprocessed. $3: the API clients (AUTH_CLIENTS) whose webhooks count.
// The events and deliveries are the delivery record's part (fanOutPart), composed here.
const INGEST_SQL = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb)
      AS i(id uuid, event text, identity_key text, event_ts bigint, account_id text, payload jsonb,
           tracking_id text, download_token_encrypted text, as_is text, plan text, event_id uuid,
           kind text, data jsonb, source jsonb, idempotency_key text, created_at timestamptz, body text,
           lease_ms int, raw_body text, trace_context text, order_key text, order_ts bigint,
           via text)
  ),
  holding AS MATERIALIZED (${holdingSql('$3::text[]')}),
  matched AS (
    SELECT n.event_id, m.id AS webhook_id
    FROM input n CROSS JOIN LATERAL (
      ${receivingWebhooksSql({ kind: 'n.kind', clients: '$3::text[]', event: 'n', holding: 'holding' })}
      LIMIT $2 + 1
    ) m
    WHERE n.plan = 'publish'
  ),
  reach AS (
    SELECT event_id, count(*) AS webhooks FROM matched GROUP BY event_id
  ),
  taken AS (
    SELECT k.as_is FROM (SELECT DISTINCT as_is FROM input WHERE as_is IS NOT NULL) k
    WHERE EXISTS (SELECT 1 FROM webhooks w
                  WHERE w.active AND w.events && ${subscriptionsSql('k.as_is')})
  ),
  watched AS (
    SELECT a.as_is, a.source
    FROM (SELECT DISTINCT n.as_is, ${ruleSourceSql('n')} AS source FROM input n
          WHERE n.as_is IN (SELECT as_is FROM taken)) a
    WHERE EXISTS (
      ${receivingWebhooksSql({ kind: 'a.as_is', clients: '$3::text[]', event: 'a', holding: 'holding' })})
  ),
  planned AS (
    SELECT i.id, i.plan = 'publish' AND coalesce(r.webhooks, 0) <= $2 AS publish,
      (i.plan = 'done' OR (i.plan = 'publish' AND coalesce(r.webhooks, 0) <= $2))
        AND wa.as_is IS NULL AS done
    FROM input i
    LEFT JOIN reach r ON r.event_id = i.event_id
    LEFT JOIN watched wa
      ON wa.as_is = i.as_is AND wa.source IS NOT DISTINCT FROM ${ruleSourceSql('i')}
  ),
  claimed AS (
    INSERT INTO inbound_event_keys (identity_key, received_at)
    SELECT identity_key, now() FROM input
    ON CONFLICT (identity_key) DO NOTHING
    RETURNING identity_key
  ),
  stored AS (
    INSERT INTO inbound_events (id, event, identity_key, event_ts, account_id, payload,
                                tracking_id, download_token_encrypted, processed_at, raw_body,
                                trace_context, via)
    SELECT i.id, i.event, i.identity_key, i.event_ts, i.account_id, i.payload, i.tracking_id,
      CASE WHEN p.done THEN NULL ELSE i.download_token_encrypted END,
      CASE WHEN p.done THEN now() END, decode(i.raw_body, 'base64'), i.trace_context, i.via
    FROM input i JOIN planned p ON p.id = i.id
    WHERE i.id IN (SELECT DISTINCT ON (c.identity_key) n.id FROM claimed c
                   JOIN input n ON n.identity_key = c.identity_key ORDER BY c.identity_key, n.id)
    RETURNING id, processed_at
  ),
  ${fanOutPart({
    from: 'stored s JOIN input i ON i.id = s.id JOIN planned p ON p.id = s.id',
    where: 'p.publish',
    claims: 'p.publish AND NOT p.done',
    rows: 'input',
    clients: '$3::text[]',
    matched: 'matched',
  })}
  SELECT s.id, s.processed_at IS NOT NULL AS processed,
    coalesce(array_agg(d.id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS delivery_ids,
    coalesce(array_agg(d.webhook_id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS webhook_ids,
    json_agg(${leasedTargetJson('d', 'w')})
      FILTER (WHERE d.lease_until IS NOT NULL) AS leased
  FROM stored s JOIN input i ON i.id = s.id LEFT JOIN d ON d.event_id = i.event_id
  LEFT JOIN webhooks w ON w.id = d.webhook_id AND d.lease_until IS NOT NULL
  GROUP BY s.id, s.processed_at`;

const ANY_UNPROCESSED_SQL = `
  SELECT id FROM inbound_events
    WHERE identity_key = ANY($1::text[]) AND processed_at IS NULL LIMIT 1`;

const BEGIN_RUN_SQL = `
  UPDATE inbound_events SET process_attempts = process_attempts + 1
    WHERE id = $1 AND processed_at IS NULL RETURNING process_attempts`;

export const INBOUND_EVENT_STATEMENTS: Statement[] = [
  { method: 'PgInboundEventStore.insert', prepared: 'inbound_ingest', sql: INGEST_SQL },
  { method: 'PgInboundEventStore.anyUnprocessed', sql: ANY_UNPROCESSED_SQL },
  { method: 'PgInboundEventStore.beginRun', sql: BEGIN_RUN_SQL },
];

interface StoredRow {
  id: string;
  processed: boolean;
  delivery_ids: string[];
  webhook_ids: string[];
  leased: LeasedTargetJson[] | null;
}

/** The leased deliveries of a stored row: fresh, so at their first attempt. */
function leasedOf(row: StoredRow, event: SerialisedEvent): LeasedDelivery[] {
  if (row.leased === null || event.published === null) return [];
  const { kind, body } = event.published;
  return row.leased.map((leased) =>
    freshLeasedDelivery(leased, { kind, body, traceContext: event.traceContext }),
  );
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

/** A row as it goes into the batch: its JSON object in the statement's input (INGEST_SQL). */
interface SerialisedEvent {
  id: string;
  identityKey: string;
  /** The object's UTF-8 bytes, in parts (the payload is the request's own buffer). */
  json: Buffer[];
  /** The notification it publishes here, if any: what a leased delivery of it sends. */
  published: { kind: SubscriptionEvent; body: string } | null;
  traceContext: string | null;
}

const jsonOrNull = (value: string | number | null): string =>
  value === null ? 'null' : JSON.stringify(value);

/**
 * One row of the statement's input, as UTF-8 JSON. The batch goes to PostgreSQL as one jsonb
 * document rather than as an array per column (the driver escapes every element of a text
 * array in JavaScript, each quote of each JSON text), and in jsonb's binary input form, built
 * from buffers: the payload goes in as the request's own bytes, neither decoded nor escaped nor
 * copied into a string (it parsed as a whole JSON value, so it cannot reach past its own field).
 */
function serialise(row: NewInboundEvent): SerialisedEvent {
  const { plan } = row;
  try {
    const payload = Buffer.isBuffer(row.payload)
      ? row.payload
      : Buffer.from(stringifyPrecise(row.payload), 'utf8');
    // The event name and account id are the platform's text too; the key is JSON (escaped).
    const head =
      `{"id":${JSON.stringify(row.id)},"event":${JSON.stringify(storableText(row.event))},` +
      `"identity_key":${JSON.stringify(row.identityKey)},"event_ts":${jsonOrNull(row.eventTs)},` +
      `"account_id":${jsonOrNull(row.accountId && storableText(row.accountId))},"payload":`;
    let tail =
      `,"tracking_id":${jsonOrNull(row.trackingId)},` +
      `"download_token_encrypted":${jsonOrNull(row.downloadTokenEncrypted)},` +
      `"as_is":${jsonOrNull(platformEventKind(row.event))},"plan":"${plan.then}",` +
      `"raw_body":${jsonOrNull(row.rawBody ? row.rawBody.toString('base64') : null)},` +
      `"trace_context":${jsonOrNull(row.traceContext ?? null)},"via":"${row.via}"`;
    let published: SerialisedEvent['published'] = null;
    if (plan.then === 'publish') {
      const { event } = plan;
      const data = stringifyPrecise(event.data);
      const source = JSON.stringify(event.source);
      published = { kind: event.kind, body: bodyOfSerialised(event, data, source) };
      tail +=
        `,"event_id":${JSON.stringify(event.id)},"kind":${JSON.stringify(event.kind)},` +
        `"data":${jsonbOfSerialised(event.data, data)},` +
        `"source":${jsonbOfSerialised(event.source, source)},` +
        `"idempotency_key":${JSON.stringify(inboundEventKey(row.id, event.kind))},` +
        `"created_at":"${event.createdAt.toISOString()}",` +
        `"body":${JSON.stringify(published.body)},"lease_ms":${jsonOrNull(row.leaseMs)},` +
        `"order_key":${jsonOrNull(event.orderKey ?? null)},` +
        `"order_ts":${jsonOrNull(event.orderKey ? event.source.event_ts : null)}`;
    }
    return {
      id: row.id,
      identityKey: row.identityKey,
      json: [Buffer.from(head, 'utf8'), payload, Buffer.from(`${tail}}`, 'utf8')],
      published,
      traceContext: row.traceContext ?? null,
    };
  } catch (error) {
    throw new UnserialisableEventError(error);
  }
}

/** jsonb's binary input: a version byte (1), then the JSON text. */
const JSONB_ARRAY_OPEN = Buffer.from([1, 0x5b]);
const COMMA = Buffer.from(',');
const ARRAY_CLOSE = Buffer.from(']');

/** The rows as one jsonb array, in its binary input form (the driver sends a Buffer as such). */
function batchDocument(rows: SerialisedEvent[]): Buffer {
  const parts: Buffer[] = [JSONB_ARRAY_OPEN];
  rows.forEach((row, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(...row.json);
  });
  parts.push(ARRAY_CLOSE);
  return Buffer.concat(parts);
}

/** The stored envelope as it came: the kept bytes when there are some, else the jsonb text. */
function payloadOf(payloadText: string, rawBody: Buffer | null): Record<string, unknown> | null {
  try {
    const parsed = parsePrecise(rawBody === null ? payloadText : rawBody.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // Kept bytes that do not parse are not what was accepted: the jsonb copy stands.
  }
  return null;
}

/** What names an inbound event in a log line, and where its processing stands. */
export type InboundEventSummary = Pick<
  InboundEventEntity,
  'id' | 'event' | 'trackingId' | 'processedAt' | 'processError' | 'receivedAt'
>;

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

  /** The event without its payload (for log lines and decisions that need not read it). */
  abstract findSummary(id: string): Promise<InboundEventSummary | null>;

  /**
   * Marks the event done, unless it is already; `error` records why it was done without a
   * notification. The event's download token is dropped then: what still needs it has a copy.
   * Its receivedAt, as it was read, keeps the update to the event's partition.
   */
  abstract markProcessed(
    event: Pick<InboundEventEntity, 'id' | 'receivedAt'>,
    error?: string | null,
  ): Promise<void>;

  /** Whether any of the events stored under these identity keys is still unprocessed. */
  abstract anyUnprocessed(identityKeys: string[]): Promise<boolean>;

  /** Records a failed processing attempt without finishing the event (the sweeper retries it). */
  abstract recordError(id: string, error: string): Promise<void>;

  /**
   * Counts one more run of the inbound job on an unprocessed event and returns how many have
   * begun, this one included; null when it is processed already (or gone). Counted before the
   * run, so a run that kills its process counts too.
   */
  abstract beginRun(id: string): Promise<number | null>;

  /** Ids of the oldest unprocessed events received before `before`. */
  abstract findUnprocessed(before: Date, limit: number): Promise<string[]>;
}

@Injectable()
export class PgInboundEventStore extends InboundEventStore {
  // Concurrent requests share one statement (and one commit): the endpoint's hot path. Six at
  // most in flight, leaving connections of the pool to the workers' claims and records: with
  // fewer, each request waited for others' commits; past that, requests gather into larger
  // batches instead of more commits (figures in docs/benchmarks.md, "Choices the figures made").
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
    this.clientIds = receivingClients(config);
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
        batchDocument(unique),
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
      return r
        ? {
            id: r.id,
            processed: r.processed,
            deliveries: deliveryRefsOf(r),
            leased: leasedOf(r, row),
          }
        : null;
    });
  }

  /**
   * The event with its payload as it came: parsed from the kept bytes when jsonb could not hold
   * them, and with numbers a JavaScript number would change kept exact (PreciseNumber).
   */
  async findById(id: string): Promise<InboundEventEntity | null> {
    const { entities, raw } = await this.repo
      .createQueryBuilder('e')
      .addSelect('e.payload::text', 'payload_text')
      .addSelect('e.raw_body', 'raw_body')
      .where('e.id = :id', { id })
      .getRawAndEntities<{ payload_text: string; raw_body: Buffer | null }>();
    const [row] = entities;
    if (!row) return null;
    const { payload_text: payloadText, raw_body: rawBody } = raw[0];
    row.payload = payloadOf(payloadText, rawBody) ?? row.payload;
    return row;
  }

  findSummary(id: string): Promise<InboundEventSummary | null> {
    return this.repo.findOne({
      select: {
        id: true,
        event: true,
        trackingId: true,
        processedAt: true,
        processError: true,
        receivedAt: true,
      },
      where: { id },
    });
  }

  async markProcessed(
    { id, receivedAt }: Pick<InboundEventEntity, 'id' | 'receivedAt'>,
    error: string | null = null,
  ): Promise<void> {
    // received_at holds microseconds and a Date milliseconds: the row's lies within one of the
    // Date read, which is all PostgreSQL needs to read one partition.
    const at = receivedAt.getTime();
    await this.repo.update(
      { id, receivedAt: Between(new Date(at - 1), new Date(at + 1)), processedAt: IsNull() },
      {
        processedAt: new Date(),
        // The reason may quote the event's own text.
        processError: error === null ? null : storableText(error),
        downloadTokenEncrypted: null,
      },
    );
  }

  /** Served by the index on identity_key in each partition. */
  async anyUnprocessed(identityKeys: string[]): Promise<boolean> {
    const rows = await query<{ id: string }>(this.db, ANY_UNPROCESSED_SQL, [identityKeys]);
    return rows.length > 0;
  }

  async recordError(id: string, error: string): Promise<void> {
    await this.repo.update({ id }, { processError: storableText(error) });
  }

  async beginRun(id: string): Promise<number | null> {
    const rows = await query<{ process_attempts: number }>(this.db, BEGIN_RUN_SQL, [id]);
    return rows.length === 0 ? null : rows[0].process_attempts;
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
