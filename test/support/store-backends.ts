import { randomUUID } from 'node:crypto';
import { holdingEveryAccount } from '../../src/delivery-record/fan-out-rule';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/config.types';
import { loadConfig } from '../../src/config/load-config';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { DeliveryAttemptEntity } from '../../src/delivery-record/delivery-attempt.entity';
import {
  DeliveryControlStore,
  PgDeliveryControlStore,
} from '../../src/delivery-record/delivery-control.store';
import { AttemptResult } from '../../src/dispatcher/engine/delivery-sender.service';
import { DeliveryEntity } from '../../src/delivery-record/delivery.entity';
import {
  DeliveryOrderStore,
  PgDeliveryOrderStore,
} from '../../src/delivery-record/delivery-order.store';
import {
  DeliveryRef,
  DeliveryStore,
  PgDeliveryStore,
} from '../../src/delivery-record/delivery.store';
import { EventEntity } from '../../src/delivery-record/event.entity';
import { EventStore, NewEvent, PgEventStore } from '../../src/delivery-record/event.store';
import {
  OperationalEventStore,
  PgOperationalEventStore,
} from '../../src/delivery-record/operational-events.store';
import { EventKind, Subscription } from '../../src/webhooks/subscription-events';
import {
  PgReceiverHealthStore,
  ReceiverHealthStore,
} from '../../src/delivery-record/receiver-health.store';
import { InboundEventEntity } from '../../src/inbound/inbound-event.entity';
import {
  InboundEventStore,
  NewInboundEvent,
  PgInboundEventStore,
} from '../../src/inbound/inbound-event.store';
import type { IngestPlan } from '../../src/inbound/inbound-job';
import { AttendanceStore } from '../../src/attendance/attendance.store';
import { RecordRetentionStore } from '../../src/delivery-record/record-retention.store';
import { PgRetentionStore, RetentionStore } from '../../src/retention/retention.store';
import { RecordingDownloadEntity } from '../../src/recordings/recording-download.entity';
import {
  PgRecordingDownloadStore,
  RecordingDownloadStore,
} from '../../src/recordings/recording-download.store';
import { WebhookEntity } from '../../src/webhooks/webhook.entity';
import { PgWebhookStore, WebhookStore } from '../../src/webhooks/webhook.store';
import {
  MemoryDeliveryControlStore,
  MemoryDeliveryStore,
  MemoryEventStore,
  MemoryInboundEventStore,
  MemoryRecordingDownloadStore,
  MemoryReceiverHealthStore,
  MemoryTables,
  MemoryWebhookStore,
} from '../fakes/memory-stores';
import { MemoryDeliveryOrderStore } from '../fakes/memory-order';
import { MemoryOperationalEventStore } from '../fakes/operational-event-store';
import { MemoryRetentionStore } from '../fakes/memory-retention';
import { TestDatabase, createTestDatabase } from './test-db';
import { CLIENTS, TEST_REDIS_URL } from './test-app';

export interface Stores {
  webhooks: WebhookStore;
  events: EventStore;
  inbound: InboundEventStore;
  deliveries: DeliveryStore;
  health: ReceiverHealthStore;
  control: DeliveryControlStore;
  downloads: RecordingDownloadStore;
  order: DeliveryOrderStore;
  operational: OperationalEventStore;
  retention: RetentionStore;
}

/** What the stores hold of a delivery, read past them (for assertions only). */
export interface DeliveryState {
  status: string;
  attemptCount: number;
  lastError: string | null;
}

export interface StoreBackend {
  name: 'postgres' | 'memory';
  stores: Stores;
  /** A delivery's state, or null when there is none. */
  delivery(id: string): Promise<DeliveryState | null>;
  close(): Promise<void>;
}

/** The API clients configured (AUTH_CLIENTS); a webhook of any other owner counts for nothing. */
export const CONFIGURED_OWNERS = Object.values(CLIENTS).map((c) => c.client_id);

/** The configured clients holding `bridge:admin`. */
export const ADMIN_OWNERS = Object.values(CLIENTS)
  .filter((c) => c.scopes.split(' ').includes('bridge:admin'))
  .map((c) => c.client_id);

/** The stores' configuration over `databaseUrl`: CLIENTS as AUTH_CLIENTS unless `env` says. */
export function testConfig(databaseUrl: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
    ...env,
  });
}

/** The real stores over a fresh database, migrated as the app migrates it. */
async function postgres(): Promise<StoreBackend> {
  const database: TestDatabase = await createTestDatabase();
  const config = testConfig(database.url);
  const db = new DataSource({
    ...dataSourceOptions(config),
    entities: [
      WebhookEntity,
      EventEntity,
      DeliveryEntity,
      DeliveryAttemptEntity,
      InboundEventEntity,
      RecordingDownloadEntity,
    ],
    migrationsRun: true,
    logging: false,
    extra: { max: 4 },
  });
  await db.initialize();
  return {
    name: 'postgres',
    stores: {
      webhooks: new PgWebhookStore(db.getRepository(WebhookEntity)),
      events: new PgEventStore(db, config),
      inbound: new PgInboundEventStore(db, db.getRepository(InboundEventEntity), config),
      deliveries: new PgDeliveryStore(db),
      health: new PgReceiverHealthStore(db),
      control: new PgDeliveryControlStore(db, config),
      downloads: new PgRecordingDownloadStore(db),
      order: new PgDeliveryOrderStore(db),
      operational: new PgOperationalEventStore(db, config),
      retention: new PgRetentionStore(db, new RecordRetentionStore(db), new AttendanceStore(db)),
    },
    async delivery(id) {
      const [row] = (await db.query(
        `SELECT status, attempt_count, last_error FROM deliveries WHERE id = $1`,
        [id],
      )) as { status: string; attempt_count: number; last_error: string | null }[];
      return row
        ? { status: row.status, attemptCount: row.attempt_count, lastError: row.last_error }
        : null;
    },
    async close() {
      await db.destroy();
      await database.drop();
    },
  };
}

/** The in-memory fakes of test/fakes, as the unit specs use them. */
function memory(): StoreBackend {
  // As receivingClients makes them of AUTH_CLIENTS entries without `accounts`: every account.
  const tables = new MemoryTables(CONFIGURED_OWNERS.flatMap(holdingEveryAccount));
  return {
    name: 'memory',
    stores: {
      webhooks: new MemoryWebhookStore(tables),
      events: new MemoryEventStore(tables),
      inbound: new MemoryInboundEventStore(tables),
      deliveries: new MemoryDeliveryStore(tables),
      health: new MemoryReceiverHealthStore(tables),
      control: new MemoryDeliveryControlStore(tables),
      downloads: new MemoryRecordingDownloadStore(tables),
      order: new MemoryDeliveryOrderStore(tables),
      operational: new MemoryOperationalEventStore(tables, ADMIN_OWNERS),
      retention: new MemoryRetentionStore(tables),
    },
    delivery(id) {
      const row = tables.deliveries.get(id);
      return Promise.resolve(
        row
          ? { status: row.status, attemptCount: row.attemptCount, lastError: row.lastError }
          : null,
      );
    },
    close: () => Promise.resolve(),
  };
}

/**
 * A store contract (immich's "medium" tests): the same cases against PostgreSQL and against
 * the in-memory fake, so that a fake cannot drift from the SQL it stands in for. Each backend
 * is opened once per file; cases make their own rows (fresh ids, owners, keys).
 */
export function describeContract(name: string, cases: (backend: () => StoreBackend) => void): void {
  describe.each(['postgres', 'memory'] as const)(`${name} (%s)`, (kind) => {
    let backend: StoreBackend;
    beforeAll(async () => {
      backend = kind === 'postgres' ? await postgres() : memory();
    });
    afterAll(() => backend?.close());
    cases(() => backend);
  });
}

let webhookCount = 0;

/** Stores a webhook through the store itself, as the API does (defaults: alpha's, active). */
export async function addWebhook(
  backend: StoreBackend,
  fields: {
    owner?: string;
    events?: Subscription[];
    active?: boolean;
    ordering?: 'none' | 'meeting';
  } = {},
): Promise<WebhookEntity> {
  webhookCount++;
  const webhook = await backend.stores.webhooks.create(
    {
      ownerClientId: fields.owner ?? 'alpha',
      url: `https://receiver.example.com/hook/${webhookCount}`,
      events: fields.events ?? ['job.started'],
      secretEncrypted: `sealed-${webhookCount}`,
      secretHint: 'cret',
      active: fields.active ?? true,
      maxInFlight: 10,
      rateLimit: null,
      ordering: fields.ordering ?? 'none',
    },
    1000,
  );
  if (!webhook) throw new Error('webhook limit reached');
  return webhook;
}

/** A platform event to store (of account acct-1), fresh ids, nothing published unless `plan` says. */
export function newInboundEvent(
  event: string,
  plan: IngestPlan = { then: 'done' },
): NewInboundEvent {
  return {
    id: randomUUID(),
    event,
    identityKey: `${event}:${randomUUID()}`,
    eventTs: 1735725605123,
    accountId: 'acct-1',
    payload: { event, payload: { account_id: 'acct-1', object: { id: '1' } } },
    trackingId: null,
    via: 'webhook',
    downloadTokenEncrypted: 'sealed-token',
    plan,
    leaseMs: null,
  };
}

/** An event to publish: `kind`, fresh id, no key unless given. */
export function newEvent(kind: EventKind, idempotencyKey: string | null = null): NewEvent {
  return {
    id: randomUUID(),
    kind,
    createdAt: new Date(),
    data: { n: 1 },
    source: null,
    idempotencyKey,
  };
}

/**
 * Deactivates every webhook stored so far, so that a case's fan-out reaches only the
 * webhooks it makes (the cases of a file share one backend).
 */
export async function quietEarlierWebhooks(backend: StoreBackend): Promise<void> {
  for (const owner of [...CONFIGURED_OWNERS, ...UNCONFIGURED_OWNERS]) {
    for (;;) {
      const page = await backend.stores.webhooks.page(owner, null, 1000);
      const active = page.filter((w) => w.active);
      for (const w of active) await backend.stores.webhooks.update(owner, w.id, { active: false });
      if (active.length === 0 || page.length <= 1000) break;
    }
  }
}

/** One fresh pending delivery (of a `kind` event) to a fresh webhook, the only one active. */
export async function oneDelivery(
  backend: StoreBackend,
  kind: Subscription & EventKind = 'job.started',
): Promise<DeliveryRef> {
  await quietEarlierWebhooks(backend);
  const webhook = await addWebhook(backend, { events: [kind] });
  const [route] = (await backend.stores.events.fanOut(newEvent(kind)))!;
  expect(route.webhookId).toBe(webhook.id);
  return route;
}

/** An attempt that failed with an HTTP 500 (a 200 when `ok`). */
export const attemptResult = (ok = false): AttemptResult => ({
  ok,
  startedAt: new Date(),
  durationMs: 12,
  statusCode: ok ? 200 : 500,
  error: ok ? null : 'HTTP 500',
  responseBody: ok ? 'ok' : 'no',
});

/** Ends a pending delivery by its first attempt, as a worker records it. */
export async function endDelivery(
  backend: StoreBackend,
  deliveryId: string,
  status: 'failed' | 'succeeded',
): Promise<void> {
  const [target] = await backend.stores.deliveries.claim([deliveryId], 60_000);
  if (!target) throw new Error(`delivery ${deliveryId} was not pending`);
  const recorded = await backend.stores.deliveries.recordAttempt({
    deliveryId,
    createdAt: target.createdAt,
    attempt: 1,
    result: attemptResult(status === 'succeeded'),
    status,
    nextAttemptAt: null,
  });
  if (!recorded) throw new Error(`delivery ${deliveryId} was not pending`);
}

/** Owners the cases use that AUTH_CLIENTS does not list. */
export const UNCONFIGURED_OWNERS = ['gone'];
