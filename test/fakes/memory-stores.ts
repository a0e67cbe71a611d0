import { randomUUID } from 'node:crypto';
import { orderAllowsIn } from './memory-order';
import { deliveryBody } from '../../src/delivery-record/delivery-body';
import { parsePrecise } from '../../src/common/precise-json';
import type { WebhookLimit } from '../../src/delivery-record/delivery.store';
import { holdingEveryAccount, receives } from '../../src/delivery-record/fan-out-rule';
import { DeliveryEntity } from '../../src/delivery-record/delivery.entity';
import {
  AttemptRecord,
  DeliveryRef,
  DeliveryStore,
  DeliveryTarget,
  LeasedDelivery,
} from '../../src/delivery-record/delivery.store';
import { EventStore, KeyedEvent, NewEvent, orderOf } from '../../src/delivery-record/event.store';
import { InboundEventEntity } from '../../src/inbound/inbound-event.entity';
import { inboundEventKey } from '../../src/inbound/inbound-job';
import {
  INLINE_FANOUT_MAX,
  InboundEventStore,
  NewInboundEvent,
  StoredInboundEvent,
} from '../../src/inbound/inbound-event.store';
import { Cursor } from '../../src/common/cursor';
import {
  RecordingDownload,
  RecordingDownloadStore,
} from '../../src/recordings/recording-download.store';
import { isPublishedKind, platformEventKind } from '../../src/webhooks/subscription-events';
import { WebhookDisabledReason, WebhookEntity } from '../../src/webhooks/webhook.entity';
import { ReceiverHealthStore } from '../../src/delivery-record/receiver-health.store';
import {
  DeliveryControlStore,
  ReplayTarget,
  ReplayWindow,
} from '../../src/delivery-record/delivery-control.store';
import { NewWebhook, WebhookChanges, WebhookStore } from '../../src/webhooks/webhook.store';

/**
 * The tables the stores share, in memory: what fan-out writes, the delivery store reads.
 * Each fake keeps the guarantees its SQL gives (the unique idempotency key, the pending and
 * attempt-count guard of an attempt record, the cascade of a deleted webhook), since the
 * services' decisions rely on them.
 */
export class MemoryTables {
  readonly webhooks = new Map<string, WebhookEntity>();
  readonly events = new Map<string, NewEvent>();
  readonly deliveries = new Map<string, DeliveryEntity>();
  readonly attempts: AttemptRecord[] = [];
  readonly inboundEvents = new Map<string, InboundEventEntity>();
  /** recording_downloads by JSON [meeting key, file ref]. */
  readonly recordingDownloads = new Map<string, RecordingDownload>();
  /**
   * @param clientIds the API clients configured (AUTH_CLIENTS): as in the SQL, a webhook of
   * any other owner gets nothing. Null: every owner counts, holding every platform account.
   */
  constructor(public clientIds: readonly string[] | null = null) {}

  /**
   * Whether the webhook gets an event of `kind` (whose notification body is `body`, matched
   * against its filter; absent: the subscription alone): the fan-out's rule (fan-out-rule.ts).
   */
  receives(webhook: WebhookEntity | ReplayTarget, kind: string, body?: string): boolean {
    const row = this.webhooks.get(webhook.id);
    const parsed: unknown = body === undefined ? undefined : parsePrecise(body);
    return (
      !!row && receives(row, kind, this.clientIds ?? holdingEveryAccount(row.ownerClientId), parsed)
    );
  }

  /**
   * Whether the webhook may take an event of `kind` from `source`, its filter aside: what the
   * ingest counts against INLINE_FANOUT_MAX (its `reach`).
   */
  reaches(webhook: WebhookEntity, kind: string, source: unknown): boolean {
    const row = this.webhooks.get(webhook.id);
    return (
      !!row &&
      receives(
        { ...row, filter: null },
        kind,
        this.clientIds ?? holdingEveryAccount(row.ownerClientId),
        {
          source,
        },
      )
    );
  }

  addWebhook(fields: Partial<WebhookEntity> = {}): WebhookEntity {
    // Distinct creation times, as the keyset order assumes nothing about ties.
    const createdAt = new Date(Date.now() + this.webhooks.size);
    const webhook: WebhookEntity = {
      id: randomUUID(),
      ownerClientId: 'client-a',
      url: 'https://receiver.example.com/hook',
      urlEncrypted: null,
      template: null,
      events: ['job.started'],
      destination: { type: 'http' },
      filter: null,
      filterPath: null,
      filterVars: null,
      headersEncrypted: null,
      headersMasked: null,
      secretEncrypted: 'sealed-secret',
      secretHint: 'cret',
      previousSecretEncrypted: null,
      previousSecretExpiresAt: null,
      active: true,
      disabledReason: null,
      disabledAt: null,
      consecutiveFailures: 0,
      maxInFlight: null,
      rateLimit: null,
      ordering: 'none',
      createdAt,
      updatedAt: createdAt,
      ...fields,
    };
    this.webhooks.set(webhook.id, webhook);
    return webhook;
  }

  /** As ON DELETE CASCADE does: the webhook's deliveries go with it. */
  deleteWebhook(id: string): void {
    this.webhooks.delete(id);
    for (const delivery of this.deliveries.values()) {
      if (delivery.webhookId === id) this.deliveries.delete(delivery.id);
    }
  }

  addDelivery(webhookId: string, fields: Partial<DeliveryEntity> = {}): DeliveryEntity {
    const now = new Date();
    const delivery: DeliveryEntity = {
      id: randomUUID(),
      webhookId,
      eventId: randomUUID(),
      event: 'job.started',
      body: '{"event":"job.started"}',
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: now,
      lastStatusCode: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      seriesStart: 0,
      requeuedBy: null,
      requeuedAt: null,
      ...fields,
    };
    this.deliveries.set(delivery.id, delivery);
    return delivery;
  }

  delivery(id: string): DeliveryEntity {
    const delivery = this.deliveries.get(id);
    if (!delivery) throw new Error(`no delivery ${id}`);
    return delivery;
  }

  addInboundEvent(fields: Partial<InboundEventEntity> & Pick<InboundEventEntity, 'event'>) {
    const row: InboundEventEntity = {
      id: randomUUID(),
      identityKey: randomUUID(),
      eventTs: null,
      accountId: 'acct-1',
      payload: {},
      trackingId: null,
      via: 'webhook',
      downloadTokenEncrypted: null,
      receivedAt: new Date(),
      processedAt: null,
      processError: null,
      processAttempts: 0,
      traceContext: null,
      ...fields,
    };
    this.inboundEvents.set(row.id, row);
    return row;
  }
}

/** A lease as the stores hand it out (the SQL gives PostgreSQL's text of lease_until). */
const leaseOf = (until: Date): string => until.toISOString();

/** What an attempt needs of a delivery and its webhook, as the claim returns it. */
function targetOf(delivery: DeliveryEntity, webhook: WebhookEntity): DeliveryTarget {
  return {
    id: delivery.id,
    createdAt: delivery.createdAt.toISOString(),
    event: delivery.event,
    // In memory every delivery keeps its body; the SQL reads it off the event.
    body: delivery.body ?? '',
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    seriesStart: delivery.seriesStart,
    webhookId: webhook.id,
    ownerClientId: webhook.ownerClientId,
    destination: webhook.destination,
    url: webhook.url,
    secretEncrypted: webhook.secretEncrypted,
    headersEncrypted: webhook.headersEncrypted,
    previousSecretEncrypted: webhook.previousSecretEncrypted,
    previousSecretExpiresAt: webhook.previousSecretExpiresAt,
    active: webhook.active,
    consecutiveFailures: webhook.consecutiveFailures,
  };
}

/** Pending, due (a second's leeway, as in the SQL) and held by no worker. */
function claimable(delivery: DeliveryEntity, now: number): boolean {
  return (
    delivery.status === 'pending' &&
    (delivery.nextAttemptAt?.getTime() ?? Infinity) <= now + 1000 &&
    !(delivery.leaseUntil && delivery.leaseUntil.getTime() > now)
  );
}

/** The claim's order_key and late columns (docs/receiving.md#ordered-delivery-per-meeting). */
function lateIn(
  tables: MemoryTables,
  delivery: DeliveryEntity,
  webhook: WebhookEntity,
): { orderKey: string | null; late: boolean } {
  if (!delivery.orderKey || webhook.ordering !== 'meeting') return { orderKey: null, late: false };
  const late = [...tables.deliveries.values()].some(
    (d) =>
      d.webhookId === delivery.webhookId &&
      d.orderKey === delivery.orderKey &&
      d.status === 'succeeded' &&
      Number(d.orderTs) > Number(delivery.orderTs),
  );
  return { orderKey: delivery.orderKey, late };
}

export class MemoryDeliveryStore extends DeliveryStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  claim(
    deliveryIds: string[],
    leaseMs: number,
    ownLeases: string[] = [],
  ): Promise<DeliveryTarget[]> {
    const now = Date.now();
    const claimed: DeliveryTarget[] = [];
    for (const id of deliveryIds) {
      const delivery = this.tables.deliveries.get(id);
      const webhook = delivery && this.tables.webhooks.get(delivery.webhookId);
      if (!delivery || !webhook) continue;
      const own = !!delivery.leaseUntil && ownLeases.includes(leaseOf(delivery.leaseUntil));
      if (!claimable(delivery, now) && !(own && delivery.status === 'pending')) continue;
      if (!orderAllowsIn(this.tables, delivery)) continue;
      const late = lateIn(this.tables, delivery, webhook);
      delivery.leaseUntil = new Date(now + leaseMs);
      claimed.push({ ...targetOf(delivery, webhook), ...late });
    }
    return Promise.resolve(claimed);
  }

  release(deliveryIds: string[], leases: string[]): Promise<void> {
    for (const id of deliveryIds) {
      const delivery = this.tables.deliveries.get(id);
      if (
        delivery?.leaseUntil &&
        delivery.status === 'pending' &&
        leases.includes(leaseOf(delivery.leaseUntil))
      ) {
        delivery.leaseUntil = null;
      }
    }
    return Promise.resolve();
  }

  limits(webhookIds: string[], defaultMaxInFlight: number): Promise<Map<string, WebhookLimit>> {
    const limits = new Map<string, WebhookLimit>();
    for (const id of webhookIds) {
      const webhook = this.tables.webhooks.get(id);
      if (webhook) {
        const maxInFlight = webhook.maxInFlight ?? defaultMaxInFlight;
        limits.set(id, { maxInFlight, rateLimit: webhook.rateLimit });
      }
    }
    return Promise.resolve(limits);
  }

  due(webhookId: string, limit: number, excluding: string[]): Promise<string[]> {
    const now = Date.now();
    const skip = new Set(excluding);
    return Promise.resolve(
      [...this.tables.deliveries.values()]
        .filter((d) => d.webhookId === webhookId && !skip.has(d.id) && claimable(d, now - 1000))
        .sort((a, b) => a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime())
        .slice(0, limit)
        .map((d) => d.id),
    );
  }

  recordAttempt(record: AttemptRecord): Promise<boolean> {
    const delivery = this.tables.deliveries.get(record.deliveryId);
    if (
      !delivery ||
      delivery.status !== 'pending' ||
      delivery.attemptCount !== record.attempt - 1
    ) {
      return Promise.resolve(false);
    }
    Object.assign(delivery, {
      attemptCount: record.attempt,
      status: record.status,
      lastStatusCode: record.result.statusCode,
      lastError: record.result.error,
      nextAttemptAt: record.nextAttemptAt,
      completedAt: record.status === 'pending' ? null : new Date(),
      leaseUntil: null,
      updatedAt: new Date(),
    });
    this.tables.attempts.push(record);
    return Promise.resolve(true);
  }

  cancel({ id }: Pick<DeliveryTarget, 'id'>, reason: string): Promise<boolean> {
    const delivery = this.tables.deliveries.get(id);
    if (!delivery || delivery.status !== 'pending') return Promise.resolve(false);
    Object.assign(delivery, {
      status: 'failed',
      lastError: reason,
      nextAttemptAt: null,
      leaseUntil: null,
      completedAt: new Date(),
      updatedAt: new Date(),
    });
    return Promise.resolve(true);
  }
}

export class MemoryReceiverHealthStore extends ReceiverHealthStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  countFailure(webhookId: string): Promise<number> {
    const webhook = this.tables.webhooks.get(webhookId);
    if (!webhook) return Promise.resolve(0);
    webhook.consecutiveFailures += 1;
    return Promise.resolve(webhook.consecutiveFailures);
  }

  resetFailures(webhookId: string): Promise<void> {
    const webhook = this.tables.webhooks.get(webhookId);
    if (webhook) webhook.consecutiveFailures = 0;
    return Promise.resolve();
  }

  /** As the one statement does: disables an active webhook and fails its pending deliveries. */
  disable(webhookId: string, reason: WebhookDisabledReason, error: string): Promise<number | null> {
    const webhook = this.tables.webhooks.get(webhookId);
    if (!webhook?.active) return Promise.resolve(null);
    Object.assign(webhook, { active: false, disabledReason: reason, disabledAt: new Date() });
    const pending = [...this.tables.deliveries.values()].filter(
      (d) => d.webhookId === webhookId && d.status === 'pending',
    );
    for (const delivery of pending) {
      Object.assign(delivery, {
        status: 'failed',
        lastError: error,
        nextAttemptAt: null,
        completedAt: new Date(),
      });
    }
    return Promise.resolve(pending.length);
  }
}

export class MemoryDeliveryControlStore extends DeliveryControlStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  redeliver(webhookId: string, deliveryId: string): Promise<DeliveryEntity | 'pending' | null> {
    const delivery = this.tables.deliveries.get(deliveryId);
    if (delivery?.webhookId !== webhookId) return Promise.resolve(null);
    if (delivery.status === 'pending') return Promise.resolve('pending');
    return Promise.resolve(this.freshSeries(delivery, 'redeliver'));
  }

  replay(webhookId: string, window: ReplayWindow): Promise<string[]> {
    const matching = [...this.tables.deliveries.values()].filter(
      (d) =>
        d.webhookId === webhookId && d.status === window.status && inWindow(d.createdAt, window),
    );
    return Promise.resolve(matching.map((d) => this.freshSeries(d, 'replay').id));
  }

  createMissed(webhook: ReplayTarget, window: ReplayWindow): Promise<string[]> {
    const received = new Set(
      [...this.tables.deliveries.values()]
        .filter((d) => d.webhookId === webhook.id)
        .map((d) => d.eventId),
    );
    const missed = [...this.tables.events.values()].filter(
      (e) =>
        this.tables.receives(
          this.tables.webhooks.get(webhook.id) ?? webhook,
          e.kind,
          deliveryBody(e),
        ) &&
        inWindow(e.createdAt, window) &&
        e.createdAt >= webhook.createdAt &&
        !received.has(e.id),
    );
    return Promise.resolve(
      missed.map(
        (e) =>
          this.tables.addDelivery(webhook.id, {
            eventId: e.id,
            event: e.kind,
            body: deliveryBody(e),
            requeuedBy: 'missed',
            requeuedAt: new Date(),
            ...orderFields(this.tables.webhooks.get(webhook.id), e),
          }).id,
      ),
    );
  }

  recentTests(webhookId: string, since: Date, limit: number): Promise<Date[]> {
    return Promise.resolve(
      [...this.tables.deliveries.values()]
        .filter(
          (d) => d.webhookId === webhookId && d.event === 'webhook.test' && d.createdAt > since,
        )
        .map((d) => d.createdAt)
        .sort((a, b) => b.getTime() - a.getTime())
        .slice(0, limit),
    );
  }

  private freshSeries(delivery: DeliveryEntity, by: 'redeliver' | 'replay'): DeliveryEntity {
    return Object.assign(delivery, {
      status: 'pending',
      seriesStart: delivery.attemptCount,
      nextAttemptAt: new Date(),
      completedAt: null,
      requeuedBy: by,
      requeuedAt: new Date(),
    });
  }
}

/** As deliveryOrderSql: a delivery to an ordered webhook keeps its event's key and event_ts. */
function orderFields(webhook: WebhookEntity | undefined, event: NewEvent): Partial<DeliveryEntity> {
  const order = webhook?.ordering === 'meeting' ? orderOf(event) : null;
  return order ? { orderKey: order.key, orderTs: String(order.ts) } : {};
}

const inWindow = (at: Date, window: ReplayWindow): boolean =>
  at >= window.since && (window.until === null || at < window.until);

export class MemoryEventStore extends EventStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  fanOut(event: NewEvent): Promise<DeliveryRef[] | null> {
    if (event.idempotencyKey !== null && this.byKey(event.idempotencyKey)) {
      return Promise.resolve(null);
    }
    this.tables.events.set(event.id, event);
    const body = deliveryBody(event);
    const deliveries = [...this.tables.webhooks.values()]
      .filter((webhook) => this.tables.receives(webhook, event.kind, body))
      .map((webhook) => {
        const fields = {
          eventId: event.id,
          event: event.kind,
          body,
          ...orderFields(webhook, event),
        };
        return { id: this.tables.addDelivery(webhook.id, fields).id, webhookId: webhook.id };
      });
    return Promise.resolve(deliveries);
  }

  findByIdempotencyKey(idempotencyKey: string): Promise<KeyedEvent | null> {
    const event = this.byKey(idempotencyKey);
    if (!event || !isPublishedKind(event.kind)) return Promise.resolve(null);
    const deliveries = [...this.tables.deliveries.values()]
      .filter((delivery) => delivery.eventId === event.id)
      .map((delivery) => ({ id: delivery.id, webhookId: delivery.webhookId }))
      .sort((a, b) => a.id.localeCompare(b.id));
    return Promise.resolve({ eventId: event.id, kind: event.kind, data: event.data, deliveries });
  }

  insertTest(webhookId: string, event: NewEvent): Promise<DeliveryEntity | null> {
    if (!this.tables.webhooks.get(webhookId)?.active) return Promise.resolve(null);
    this.tables.events.set(event.id, event);
    const body = deliveryBody(event);
    return Promise.resolve(
      this.tables.addDelivery(webhookId, { eventId: event.id, event: event.kind, body }),
    );
  }

  private byKey(idempotencyKey: string): NewEvent | undefined {
    return [...this.tables.events.values()].find((e) => e.idempotencyKey === idempotencyKey);
  }
}

export class MemoryInboundEventStore extends InboundEventStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  insert(row: NewInboundEvent): Promise<StoredInboundEvent | null> {
    const rows = [...this.tables.inboundEvents.values()];
    if (rows.some((r) => r.identityKey === row.identityKey)) return Promise.resolve(null);
    const { plan, payload, leaseMs, ...fields } = row;
    const inline = plan.then === 'publish' ? plan.event : null;
    const webhooks = [...this.tables.webhooks.values()];
    const reach = inline
      ? webhooks.filter((webhook) => this.tables.receives(webhook, inline.kind))
      : [];
    const publish =
      inline !== null &&
      reach.filter((webhook) => this.tables.reaches(webhook, inline.kind, inline.source)).length <=
        INLINE_FANOUT_MAX;
    // As the SQL does: an event a webhook takes as it is is left to the inbound job.
    const asIs = platformEventKind(row.event);
    const watched =
      asIs !== null &&
      webhooks.some((webhook) =>
        inline
          ? this.tables.reaches(webhook, asIs, inline.source)
          : this.tables.receives(webhook, asIs),
      );
    const processed = (plan.then === 'done' || publish) && !watched;
    const stored = this.tables.addInboundEvent({
      ...fields,
      eventTs: row.eventTs === null ? null : String(row.eventTs),
      payload: Buffer.isBuffer(payload)
        ? (JSON.parse(payload.toString('utf8')) as Record<string, unknown>)
        : payload,
      downloadTokenEncrypted: processed ? null : row.downloadTokenEncrypted,
      processedAt: processed ? new Date() : null,
      traceContext: row.traceContext ?? null,
    });
    const deliveries: DeliveryRef[] = [];
    const leased: LeasedDelivery[] = [];
    if (inline && publish) {
      this.tables.events.set(inline.id, {
        id: inline.id,
        kind: inline.kind,
        createdAt: inline.createdAt,
        data: inline.data,
        source: inline.source,
        idempotencyKey: inboundEventKey(stored.id, inline.kind),
      });
      const body = deliveryBody(inline);
      for (const webhook of reach) {
        if (!this.tables.receives(webhook, inline.kind, body)) continue;
        const delivery = this.tables.addDelivery(webhook.id, {
          eventId: inline.id,
          event: inline.kind,
          body,
          leaseUntil: leaseMs === null ? null : new Date(Date.now() + leaseMs),
        });
        deliveries.push({ id: delivery.id, webhookId: webhook.id });
        if (delivery.leaseUntil) {
          leased.push({ lease: leaseOf(delivery.leaseUntil), target: targetOf(delivery, webhook) });
        }
      }
    }
    return Promise.resolve({ id: stored.id, processed, deliveries, leased });
  }

  findById(id: string): Promise<InboundEventEntity | null> {
    return Promise.resolve(this.tables.inboundEvents.get(id) ?? null);
  }

  findSummary(id: string): Promise<InboundEventEntity | null> {
    return this.findById(id);
  }

  markProcessed(
    { id }: Pick<InboundEventEntity, 'id'>,
    error: string | null = null,
  ): Promise<void> {
    const row = this.tables.inboundEvents.get(id);
    if (row && row.processedAt === null) {
      Object.assign(row, {
        processedAt: new Date(),
        processError: error,
        downloadTokenEncrypted: null,
      });
    }
    return Promise.resolve();
  }

  anyUnprocessed(identityKeys: string[]): Promise<boolean> {
    return Promise.resolve(
      [...this.tables.inboundEvents.values()].some(
        (row) => identityKeys.includes(row.identityKey) && row.processedAt === null,
      ),
    );
  }

  recordError(id: string, error: string): Promise<void> {
    const row = this.tables.inboundEvents.get(id);
    if (row) row.processError = error;
    return Promise.resolve();
  }

  beginRun(id: string): Promise<number | null> {
    const row = this.tables.inboundEvents.get(id);
    if (!row || row.processedAt !== null) return Promise.resolve(null);
    row.processAttempts += 1;
    return Promise.resolve(row.processAttempts);
  }

  findUnprocessed(before: Date, limit: number): Promise<string[]> {
    return Promise.resolve(
      [...this.tables.inboundEvents.values()]
        .filter((row) => row.processedAt === null && row.receivedAt < before)
        .sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime())
        .slice(0, limit)
        .map((row) => row.id),
    );
  }
}

export class MemoryWebhookStore extends WebhookStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  create(webhook: NewWebhook, limit: number): Promise<WebhookEntity | null> {
    const held = [...this.tables.webhooks.values()].filter(
      (w) => w.ownerClientId === webhook.ownerClientId,
    ).length;
    return Promise.resolve(held >= limit ? null : this.tables.addWebhook(webhook));
  }

  page(ownerClientId: string, cursor: Cursor | null, limit: number): Promise<WebhookEntity[]> {
    const key = (w: { createdAt: Date; id: string }) => `${w.createdAt.toISOString()}|${w.id}`;
    const after = cursor && key({ createdAt: new Date(cursor.createdAt), id: cursor.id });
    return Promise.resolve(
      [...this.tables.webhooks.values()]
        .filter((w) => w.ownerClientId === ownerClientId && (after === null || key(w) < after))
        .sort((a, b) => (key(a) < key(b) ? 1 : -1))
        .slice(0, limit + 1),
    );
  }

  findOwned(ownerClientId: string, id: string): Promise<WebhookEntity | null> {
    const webhook = this.tables.webhooks.get(id);
    return Promise.resolve(webhook?.ownerClientId === ownerClientId ? webhook : null);
  }

  update(ownerClientId: string, id: string, changes: WebhookChanges): Promise<boolean> {
    const webhook = this.tables.webhooks.get(id);
    if (webhook?.ownerClientId !== ownerClientId) return Promise.resolve(false);
    const { secret, ...fields } = changes;
    if (secret) {
      Object.assign(webhook, {
        previousSecretEncrypted: secret.previousUntil ? webhook.secretEncrypted : null,
        previousSecretExpiresAt: secret.previousUntil,
        secretEncrypted: secret.secretEncrypted,
        secretHint: secret.secretHint,
      });
    }
    Object.assign(webhook, fields, { updatedAt: new Date() });
    return Promise.resolve(true);
  }

  remove(ownerClientId: string, id: string): Promise<boolean> {
    if (this.tables.webhooks.get(id)?.ownerClientId !== ownerClientId) {
      return Promise.resolve(false);
    }
    this.tables.deleteWebhook(id);
    return Promise.resolve(true);
  }
}

export class MemoryRecordingDownloadStore extends RecordingDownloadStore {
  constructor(private readonly tables: MemoryTables) {
    super();
  }

  save(
    meetingKey: string,
    files: { fileRef: string; downloadUrl: string }[],
    downloadTokenEncrypted: string,
    expiresAt: Date,
  ): Promise<void> {
    const all = this.tables.recordingDownloads;
    for (const [key, entry] of all) if (entry.expiresAt.getTime() < Date.now()) all.delete(key);
    for (const file of files) {
      const key = JSON.stringify([meetingKey, file.fileRef]);
      const earlier = all.get(key);
      if (earlier && earlier.expiresAt > expiresAt) continue;
      all.set(key, { downloadUrl: file.downloadUrl, downloadTokenEncrypted, expiresAt });
    }
    return Promise.resolve();
  }

  find(meetingKey: string, fileRef: string): Promise<RecordingDownload | null> {
    return Promise.resolve(
      this.tables.recordingDownloads.get(JSON.stringify([meetingKey, fileRef])) ?? null,
    );
  }
}
