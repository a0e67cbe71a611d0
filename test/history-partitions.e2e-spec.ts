import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../src/database/migrations';
import { HistoryPartitions1768000000000 } from '../src/database/migrations/1768000000000-history-partitions';
import { IngestClaimsKeys1768000000100 } from '../src/database/migrations/1768000000100-ingest-claims-keys';
import {
  Partition,
  attachPartition,
  detachPartition,
  dropExpired,
  partitionsOf,
} from '../src/database/partitions';
import { TestDatabase, createTestDatabase, migratedDataSource } from './support/test-db';
import { waitFor } from './support/wait-for';

type Json = Record<string, unknown>;

const HISTORY = ['events', 'deliveries', 'delivery_attempts', 'inbound_events'];
const BEFORE = MIGRATIONS.slice(0, MIGRATIONS.indexOf(HistoryPartitions1768000000000));
const THROUGH = MIGRATIONS.slice(0, MIGRATIONS.indexOf(HistoryPartitions1768000000000) + 1);

/** Every row of a history table, as text, in one order: what must survive the move. */
const rowsOf = async (db: DataSource, table: string): Promise<string[]> =>
  (
    (await db.query(`SELECT t::text AS row FROM ${table} t ORDER BY t::text`)) as { row: string }[]
  ).map((r) => r.row);

const snapshot = async (db: DataSource) =>
  Object.fromEntries(
    await Promise.all(HISTORY.map(async (t) => [t, await rowsOf(db, t)] as const)),
  );

/**
 * The move into partitions (docs/operations.md#partitions) on a database holding the previous
 * round's schema and rows: rows of every age (one older than any partition a day wide would
 * hold, one in the partitions ahead), nothing lost, relations intact, and back again.
 */
describe('migration 1768000000000: history tables into time partitions', () => {
  let database: TestDatabase;
  let db: DataSource;

  beforeAll(async () => {
    expect(MIGRATIONS).toContain(HistoryPartitions1768000000000);
    database = await createTestDatabase();
    db = await migratedDataSource(database.url, BEFORE);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const ages = ['400 days', '31 days', '29 days', '1 day', '0 days', '-3 days'];
  let before: Record<string, string[]>;

  it('holds rows of every age at the previous schema', async () => {
    const [webhook] = (await db.query(
      `INSERT INTO webhooks (url, events, secret_encrypted, secret_hint, owner_client_id)
       VALUES ('https://example.com/hook', '{job.started}', 'x', 'x', 'ops') RETURNING id`,
    )) as { id: string }[];
    for (const [n, age] of ages.entries()) {
      const at = `now() - interval '${age}'`;
      const [event] = (await db.query(
        `INSERT INTO events (kind, data, created_at, idempotency_key, body)
         VALUES ('job.started', $1, ${at}, $2, '{}') RETURNING id`,
        [{ n }, `key-${n}`],
      )) as { id: string }[];
      const [delivery] = (await db.query(
        `INSERT INTO deliveries (webhook_id, event_id, event, status, attempt_count, created_at,
           completed_at)
         VALUES ($1, $2, 'job.started', $3, 2, ${at}, CASE WHEN $3 <> 'pending' THEN ${at} END)
         RETURNING id`,
        [webhook.id, event.id, n % 2 ? 'pending' : 'succeeded'],
      )) as { id: string }[];
      await db.query(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
         VALUES ($1, 1, ${at}, 12, 500), ($1, 2, ${at} + interval '1 minute', 7, 200)`,
        [delivery.id],
      );
      await db.query(
        `INSERT INTO inbound_events (event, identity_key, event_ts, payload, received_at)
         VALUES ('meeting.ended', $1, 1, $2, ${at})`,
        [`identity-${n}`, { payload: { object: { uuid: `occurrence-${n}` } } }],
      );
    }
    before = await snapshot(db);
    for (const table of HISTORY) expect(before[table].length).toBeGreaterThanOrEqual(ages.length);
  });

  it('moves every row into partitions, with its relations, keys and the attendance trigger', async () => {
    const partitioned = new DataSource({
      type: 'postgres',
      url: database.url,
      migrations: THROUGH,
      migrationsTransactionMode: 'each',
      logging: false,
    });
    await partitioned.initialize();
    try {
      expect(await partitioned.runMigrations({ transaction: 'each' })).toHaveLength(1);
      expect(await snapshot(partitioned)).toEqual(before);
      const kinds = (await partitioned.query(
        `SELECT relname, relkind FROM pg_class WHERE relname = ANY($1) ORDER BY relname`,
        [HISTORY],
      )) as { relname: string; relkind: string }[];
      expect(kinds.map((k) => k.relkind)).toEqual(['p', 'p', 'p', 'p']);
      // No default partition; one partition from MINVALUE, then days up to a week ahead.
      const defaults = await partitioned.query(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'`,
      );
      expect(defaults).toEqual([]);
      const [ahead] = (await partitioned.query(
        `SELECT count(*)::int AS n FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'deliveries'::regclass`,
      )) as { n: number }[];
      expect(ahead.n).toBeGreaterThanOrEqual(1 + 32 + 7);
      // Relations: every delivery's event and every attempt's delivery is there.
      const orphans = await partitioned.query(
        `SELECT 'delivery' AS what FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)
         UNION ALL
         SELECT 'attempt' FROM delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = a.delivery_id)`,
      );
      expect(orphans).toEqual([]);
      // The keys that keep ingest idempotent came along.
      const keys = (await partitioned.query(
        `SELECT (SELECT count(*)::int FROM inbound_event_keys) AS inbound,
                (SELECT count(*)::int FROM event_keys) AS events`,
      )) as { inbound: number; events: number }[];
      expect(keys).toEqual([{ inbound: ages.length, events: ages.length }]);
      // The attendance trigger fires on the partitioned table as on the old one.
      await partitioned.query(
        `INSERT INTO inbound_events (event, identity_key, payload)
         VALUES ('meeting.ended', 'after-move', '{"payload":{"object":{"uuid":"moved-occurrence"}}}')`,
      );
      expect(
        await partitioned.query(`SELECT uuid FROM attendance WHERE uuid = 'moved-occurrence'`),
      ).toEqual([{ uuid: 'moved-occurrence' }]);
      // The attempts' sequence goes on from where it was.
      const [{ id }] = (await partitioned.query(
        `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms)
         SELECT id, 3, now(), 1 FROM deliveries LIMIT 1 RETURNING id::int`,
      )) as { id: number }[];
      expect(id).toBe(2 * ages.length + 1);
      // A row stored by a statement of its own, or re-keyed, keeps the keys in step.
      await partitioned.query(
        `UPDATE inbound_events SET identity_key = 'identity-0-rekeyed' WHERE identity_key = 'identity-0'`,
      );
      expect(
        await partitioned.query(
          `SELECT identity_key FROM inbound_event_keys
           WHERE identity_key IN ('identity-0', 'identity-0-rekeyed', 'after-move') ORDER BY 1`,
        ),
      ).toEqual([{ identity_key: 'after-move' }, { identity_key: 'identity-0-rekeyed' }]);
      await partitioned.query(
        `UPDATE inbound_events SET identity_key = 'identity-0' WHERE identity_key = 'identity-0-rekeyed'`,
      );
      await partitioned.query(`DELETE FROM delivery_attempts WHERE attempt = 3`);
      await partitioned.query(`DELETE FROM inbound_events WHERE identity_key = 'after-move'`);

      // And back: down() restores the plain tables with the same rows and constraints.
      await partitioned.undoLastMigration({ transaction: 'each' });
      expect(await snapshot(partitioned)).toEqual(before);
      const constraints = (await partitioned.query(
        `SELECT conname FROM pg_constraint WHERE conrelid = ANY($1::regclass[]) AND contype IN ('u', 'f')
         ORDER BY conname`,
        [HISTORY],
      )) as { conname: string }[];
      expect(constraints.map((c) => c.conname)).toEqual([
        'deliveries_event_id_fkey',
        'deliveries_webhook_id_fkey',
        'delivery_attempts_delivery_id_fkey',
        'events_idempotency_key_uq',
        'inbound_events_identity_key_uq',
      ]);
    } finally {
      await partitioned.destroy();
    }
  });
});

/** Retention's drop of whole partitions (docs/operations.md#partitions), on the partitioned tables. */
describe('dropping expired partitions', () => {
  let database: TestDatabase;
  let db: DataSource;
  const DAY_MS = 86_400_000;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await migratedDataSource(database.url, MIGRATIONS);
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  // The ingest statement claims each event's key itself (src/inbound/inbound-event.store.ts).
  it('has no insert trigger adding inbound keys again, keeps the re-keying and attendance ones; down() puts it back', async () => {
    const triggers = async (): Promise<string[]> =>
      (
        (await db.query(
          `SELECT tgname FROM pg_trigger WHERE tgrelid = 'inbound_events'::regclass AND NOT tgisinternal
           ORDER BY tgname`,
        )) as { tgname: string }[]
      ).map((t) => t.tgname);
    const after = ['inbound_events_attendance', 'inbound_events_rekeyed'];
    expect(await triggers()).toEqual(after);
    // Back to before IngestClaimsKeys (the migrations after it first).
    for (let i = MIGRATIONS.indexOf(IngestClaimsKeys1768000000100); i < MIGRATIONS.length; i++) {
      await db.undoLastMigration({ transaction: 'each' });
    }
    expect(await triggers()).toEqual([
      'inbound_events_attendance',
      'inbound_events_keys',
      'inbound_events_rekeyed',
    ]);
    await db.runMigrations({ transaction: 'each' });
    expect(await triggers()).toEqual(after);
  });

  it('drops the days wholly older than the cutoff, widens the first partition over them, and keeps what a check keeps', async () => {
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const day = (n: number) => new Date(today - n * DAY_MS + 3_600_000).toISOString();
    for (const n of [31, 30, 29]) {
      await db.query(
        `INSERT INTO inbound_events (event, identity_key, payload, received_at)
         VALUES ('meeting.started', $1, '{}', $2)`,
        [`day-${n}`, day(n)],
      );
    }
    const cutoff = new Date(today - 29 * DAY_MS);
    const keepDay30 = (p: Partition): [string, unknown[]] | null =>
      p.from && p.from.getTime() === today - 30 * DAY_MS ? [`SELECT true AS kept`, []] : null;

    expect(await dropExpired(db, 'inbound_events', cutoff, keepDay30)).toBe(1); // the day 31 ago
    const left = async () =>
      ((await db.query(`SELECT identity_key FROM inbound_events ORDER BY 1`)) as Json[]).map(
        (r) => r.identity_key,
      );
    expect(await left()).toEqual(['day-29', 'day-30']);

    const partitions = await partitionsOf(db, 'inbound_events');
    expect(partitions[0]).toEqual({
      name: 'inbound_events_before',
      from: null,
      to: new Date(today - 30 * DAY_MS),
    });
    expect(partitions[1].from).toEqual(new Date(today - 30 * DAY_MS));
    // A row of a dropped day still has a partition: the widened first one takes it.
    await db.query(
      `INSERT INTO inbound_events (event, identity_key, payload, received_at)
       VALUES ('meeting.started', 'late', '{}', $1)`,
      [day(31)],
    );
    // The day put back takes rows as before.
    await db.query(
      `INSERT INTO inbound_events (event, identity_key, payload, received_at)
       VALUES ('meeting.started', 'day-30-again', '{}', $1)`,
      [day(30)],
    );
    expect(await left()).toEqual(['day-29', 'day-30', 'day-30-again', 'late']);
  });

  it('puts back a partition of deliveries while a transaction that read webhooks writes them: no deadlock', async () => {
    const [first] = await partitionsOf(db, 'deliveries');
    await detachPartition(db, 'deliveries', first.name);
    // Creating a webhook reads webhooks (the owner's count), then writes them.
    const writer = db.createQueryRunner();
    await writer.connect();
    try {
      await writer.startTransaction();
      await writer.query(`SELECT count(*) FROM webhooks`);
      const attaching = attachPartition(db, 'deliveries', first);
      await waitFor(
        async () =>
          (
            await db.query(
              `SELECT 1 FROM pg_locks WHERE relation = 'webhooks'::regclass AND NOT granted`,
            )
          ).length > 0,
        { what: 'the attach waiting for webhooks' },
      );
      // Before: the attach held a weaker lock on webhooks while it waited for the strongest,
      // and this write, waiting for it, made a deadlock that PostgreSQL broke by failing one.
      await writer.query(`UPDATE webhooks SET active = active WHERE false`);
      await writer.commitTransaction();
      await attaching;
    } finally {
      await writer.release();
    }
    expect((await partitionsOf(db, 'deliveries'))[0]).toEqual(first);
  });
});
