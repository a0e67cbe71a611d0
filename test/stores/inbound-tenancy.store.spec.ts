import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { ALL_ACCOUNTS_HOLDERS_LOOKED_UP } from '../../src/delivery-record/fan-out-rule';
import { InboundEventEntity } from '../../src/inbound/inbound-event.entity';
import { INLINE_FANOUT_MAX, PgInboundEventStore } from '../../src/inbound/inbound-event.store';
import { notificationSource } from '../../src/inbound/inbound-job';
import { Subscription } from '../../src/webhooks/subscription-events';
import { WebhookEntity } from '../../src/webhooks/webhook.entity';
import { PgWebhookStore } from '../../src/webhooks/webhook.store';
import { TestDatabase, createTestDatabase } from '../support/test-db';
import { newInboundEvent, testConfig } from '../support/store-backends';

/*
 * Tenancy by account in the ingest statement (docs/accounts.md#whose-events), PostgreSQL only:
 * the in-memory fake knows no installations. The ingest finds an event's webhooks from the
 * clients holding its account (src/delivery-record/fan-out-rule.ts, receivingWebhooksSql), and
 * every case here has webhooks of the kind whose owners do not hold the account, so a delivery
 * to any of them fails it. Run with few clients holding every account (each holder's webhooks
 * looked up) and with more than ALL_ACCOUNTS_HOLDERS_LOOKED_UP (the webhooks read by kind).
 */

const KIND = 'job.started';
const secret = (id: string) => `${id}-secret-0123456789`;
const client = (id: string, accounts?: string[] | '*') => ({
  client_id: id,
  client_secret: secret(id),
  scopes: 'webhooks:read webhooks:write',
  ...(accounts === undefined ? {} : { accounts }),
});
/** Clients holding one account each, by installing it (`tenant-n` installed `acct-n`). */
const TENANTS = Array.from({ length: 20 }, (_, i) => `tenant-${i}`);

describe.each([
  ['looked up by holder', 1],
  ['read by kind', ALL_ACCOUNTS_HOLDERS_LOOKED_UP + 1],
])('ingest fan-out by account, every-account holders %s', (_, everyHolders) => {
  let database: TestDatabase;
  let db: DataSource;
  let store: PgInboundEventStore;
  let webhooks: PgWebhookStore;
  /** The webhook of KIND of each owner. */
  const hookOf = new Map<string, string>();
  const everyOwners = Array.from({ length: everyHolders }, (_, i) => `ops-${i}`);

  const addWebhook = async (owner: string, events: Subscription[] = [KIND], active = true) => {
    const webhook = await webhooks.create(
      {
        ownerClientId: owner,
        url: `https://receiver.example.com/${owner}/${randomUUID()}`,
        events,
        secretEncrypted: 'sealed',
        secretHint: 'cret',
        active,
        maxInFlight: 10,
        rateLimit: null,
        ordering: 'none',
      },
      1000,
    );
    return webhook!.id;
  };

  const ingest = (accountId: string | null, event = 'meeting.started') =>
    store.insert({
      ...newInboundEvent(event, {
        then: 'publish',
        event: {
          id: randomUUID(),
          kind: KIND,
          createdAt: new Date(),
          data: { id: '1' },
          source: notificationSource({
            event,
            eventTs: 1735725605123,
            accountId,
            trackingId: null,
            receivedAt: new Date(),
            via: 'webhook',
          }),
        },
      }),
      accountId,
    });

  /** The owners of the webhooks an event of `accountId` was delivered to, sorted. */
  const reached = async (accountId: string | null): Promise<string[]> => {
    const stored = await ingest(accountId);
    expect(stored).toMatchObject({ processed: true });
    const owners = stored!.deliveries.map(
      ({ webhookId }) => [...hookOf].find(([, id]) => id === webhookId)?.[0] ?? webhookId,
    );
    return owners.sort();
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = testConfig(database.url, {
      AUTH_CLIENTS: JSON.stringify([
        ...everyOwners.map((id) => client(id)),
        client('listed', ['acct-listed', 'acct-both']),
        client('installer', []),
        client('lost', []),
        client('quiet', []),
        client('watcher', []),
        ...TENANTS.map((id) => client(id, [])),
      ]),
    });
    db = new DataSource({
      ...dataSourceOptions(config),
      entities: [WebhookEntity, InboundEventEntity],
      migrationsRun: true,
      logging: false,
      extra: { max: 2 },
    });
    await db.initialize();
    webhooks = new PgWebhookStore(db.getRepository(WebhookEntity));
    store = new PgInboundEventStore(db, db.getRepository(InboundEventEntity), config);
    const installed: [string, string, string][] = [
      ['acct-installed', 'installer', 'active'],
      ['acct-both', 'installer', 'active'],
      ['acct-reinstall', 'installer', 'needs_reinstall'],
      ['acct-revoked', 'lost', 'revoked'],
      // Installed by a client AUTH_CLIENTS no longer lists.
      ['acct-gone', 'gone', 'active'],
      ['acct-quiet', 'quiet', 'active'],
      ...TENANTS.map((id, i): [string, string, string] => [`acct-${i}`, id, 'active']),
    ];
    for (const [account, by, status] of installed) {
      await db.query(
        `INSERT INTO installations (account_id, installed_by, status) VALUES ($1, $2, $3)`,
        [account, by, status],
      );
    }
    for (const owner of [...everyOwners, 'listed', 'installer', 'lost', 'gone', ...TENANTS]) {
      hookOf.set(owner, await addWebhook(owner));
    }
    // Paused, and of other kinds only: never reached.
    await addWebhook('quiet', [KIND], false);
    await addWebhook('quiet', ['job.completed', 'zoom.meeting.ended']);
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it("reaches an installed account's installer and the clients holding every account, no other", async () => {
    expect(await reached('acct-installed')).toEqual([...everyOwners, 'installer'].sort());
    expect(await reached('acct-7')).toEqual([...everyOwners, 'tenant-7'].sort());
  });

  it("reaches a listed account's clients, and a client holding it twice once", async () => {
    expect(await reached('acct-listed')).toEqual([...everyOwners, 'listed'].sort());
    expect(await reached('acct-both')).toEqual([...everyOwners, 'installer', 'listed'].sort());
  });

  it('keeps an installation needing reinstall, not a revoked one nor one of a client gone', async () => {
    expect(await reached('acct-reinstall')).toEqual([...everyOwners, 'installer'].sort());
    expect(await reached('acct-revoked')).toEqual([...everyOwners].sort());
    expect(await reached('acct-gone')).toEqual([...everyOwners].sort());
  });

  it('reaches an account nobody holds, or no account, only through the clients holding every account', async () => {
    expect(await reached('acct-unknown')).toEqual([...everyOwners].sort());
    expect(await reached(null)).toEqual([...everyOwners].sort());
  });

  it("reaches no paused webhook nor one of another kind: the holder's event publishes nothing for it", async () => {
    expect(await reached('acct-quiet')).toEqual([...everyOwners].sort());
  });

  it('leaves an event to the inbound job only when a holder of its account takes it as it is', async () => {
    const watcher = await addWebhook('watcher', ['zoom.meeting.started']);
    try {
      // The watcher holds no account: its subscription does not hold back another's events.
      expect(await ingest('acct-3')).toMatchObject({ processed: true });
      await db.query(
        `INSERT INTO installations (account_id, installed_by, status) VALUES ('acct-watched', 'watcher', 'active')`,
      );
      expect(await ingest('acct-watched')).toMatchObject({ processed: false });
    } finally {
      await webhooks.update('watcher', watcher, { active: false });
    }
  });

  it("counts only the holders' webhooks against the cap of webhooks published inline", async () => {
    // tenant-0 alone reaches more than the cap; every other webhook of the kind is not its.
    const extra = INLINE_FANOUT_MAX - everyHolders;
    for (let i = 0; i < extra; i++) await addWebhook('tenant-0');
    expect(await ingest('acct-0')).toMatchObject({ processed: false, deliveries: [] });
    const stored = await ingest('acct-1');
    expect(stored).toMatchObject({ processed: true });
    expect(stored!.deliveries).toHaveLength(everyHolders + 1);
  });
});
