import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history tables become time-partitioned (docs/operations.md#partitions): each is moved
 * into a new partitioned table of the same name, nothing lost, in the migration's transaction.
 *
 * - Partition keys: events and deliveries by created_at, delivery_attempts by started_at,
 *   inbound_events by received_at. A primary key must contain the partition key, so each
 *   becomes (id, <time>). Ids stay unique in practice (UUIDv7 / a sequence).
 * - A unique key must contain the partition key too, so the two uniques ingest relies on move to
 *   narrow unpartitioned key tables: inbound_event_keys (the dedupe of platform redeliveries)
 *   and event_keys (publish idempotency). The other two uniques (a delivery per event and
 *   webhook, an attempt number per delivery) become plain indexes: what wrote them is
 *   guarded otherwise (the replay takes a lock per webhook, an attempt is written only by the
 *   update that moves attempt_count).
 * - The foreign keys between events, deliveries and attempts go: one referencing a partitioned
 *   table must name its partition key (a copy of the event's time in every delivery), and
 *   dropping a referenced partition would check every referencing row. Retention drops the
 *   three together; deliveries keep their key to webhooks.
 * - Partitions: one from MINVALUE up to 32 days ago (old rows, however old), then a day each up
 *   to 8 days ahead; the service makes the next ones (partition-maker) and no default partition
 *   exists (why: docs/operations.md#partitions).
 *
 * Written out here rather than shared: migrations import nothing outside src/database.
 */
const TABLES: { table: string; column: string }[] = [
  { table: 'events', column: 'created_at' },
  { table: 'deliveries', column: 'created_at' },
  { table: 'delivery_attempts', column: 'started_at' },
  { table: 'inbound_events', column: 'received_at' },
];
/** The unique indexes replaced by key tables or plain indexes, by table. */
const UNIQUES: Record<string, string[]> = {
  events: ['events_idempotency_key_uq'],
  deliveries: ['deliveries_event_webhook_uq'],
  delivery_attempts: ['delivery_attempts_delivery_attempt_uq'],
  inbound_events: ['inbound_events_identity_key_uq'],
};
const PLAIN_INDEXES = [
  `CREATE INDEX events_idempotency_key_idx ON events (idempotency_key) WHERE idempotency_key IS NOT NULL`,
  `CREATE INDEX deliveries_event_webhook_idx ON deliveries (event_id, webhook_id)`,
  `CREATE INDEX delivery_attempts_delivery_attempt_idx ON delivery_attempts (delivery_id, attempt)`,
  `CREATE INDEX inbound_events_identity_key_idx ON inbound_events (identity_key)`,
];
const DAY_MS = 86_400_000;
const BACK_DAYS = 32;
const AHEAD_DAYS = 8;

const q = (value: string) => `'${value.replace(/'/g, "''")}'`;

export class HistoryPartitions1768000000000 implements MigrationInterface {
  name = 'HistoryPartitions1768000000000';

  async up(runner: QueryRunner): Promise<void> {
    // Makes the partitions of `parent` after its last one, `width` each, until `until`; the
    // service calls it ahead of time (src/delivery-record/partition-maker.ts).
    await runner.query(`
      CREATE FUNCTION history_partitions_make(parent regclass, until timestamptz, width interval)
      RETURNS int LANGUAGE plpgsql AS $$
      DECLARE
        upper_bound timestamptz;
        made int := 0;
        name text;
      BEGIN
        SELECT max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz)
          INTO upper_bound
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = parent;
        IF upper_bound IS NULL THEN
          upper_bound := date_trunc('day', now(), 'UTC');
        END IF;
        WHILE upper_bound < until LOOP
          name := format('%s_p%s', (SELECT relname FROM pg_class WHERE oid = parent),
                         to_char(upper_bound AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MI'));
          EXECUTE format('CREATE TABLE %I PARTITION OF %s FOR VALUES FROM (%L) TO (%L)',
                         name, parent, upper_bound, upper_bound + width);
          upper_bound := upper_bound + width;
          made := made + 1;
        END LOOP;
        RETURN made;
      END $$`);

    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const firstDay = new Date(today - BACK_DAYS * DAY_MS).toISOString();
    const until = new Date(today + AHEAD_DAYS * DAY_MS).toISOString();

    for (const { table, column } of TABLES) {
      const old = `${table}_unpartitioned`;
      const indexes = (await runner.query(
        `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def,
                EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid) AS constraint
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = $1::regclass`,
        [table],
      )) as { name: string; def: string; constraint: boolean }[];
      const triggers = (await runner.query(
        `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
         WHERE tgrelid = $1::regclass AND NOT tgisinternal`,
        [table],
      )) as { name: string; def: string }[];

      await runner.query(`ALTER TABLE ${table} RENAME TO ${old}`);
      for (const index of indexes) {
        await runner.query(`ALTER INDEX ${index.name} RENAME TO ${index.name}_unpartitioned`);
      }
      for (const trigger of triggers) {
        await runner.query(`DROP TRIGGER ${trigger.name} ON ${old}`);
      }
      await runner.query(
        `CREATE TABLE ${table} (LIKE ${old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
           INCLUDING STORAGE INCLUDING COMPRESSION)
         PARTITION BY RANGE (${column})`,
      );
      await runner.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (id, ${column})`,
      );
      await runner.query(
        `CREATE TABLE ${table}_before PARTITION OF ${table}
         FOR VALUES FROM (MINVALUE) TO (${q(firstDay)})`,
      );
      await runner.query(`SELECT history_partitions_make($1::regclass, $2, interval '1 day')`, [
        table,
        until,
      ]);
      await runner.query(`INSERT INTO ${table} SELECT * FROM ${old}`);
      for (const index of indexes) {
        if (index.name === `${table}_pkey`) continue;
        if (UNIQUES[table].includes(index.name)) continue;
        await runner.query(index.def);
      }
      for (const trigger of triggers) await runner.query(trigger.def);
    }
    for (const sql of PLAIN_INDEXES) await runner.query(sql);
    await runner.query(
      `ALTER TABLE deliveries ADD CONSTRAINT deliveries_webhook_id_fkey FOREIGN KEY (webhook_id)
       REFERENCES webhooks (id) ON DELETE CASCADE`,
    );
    // The attempts' id sequence belonged to the old column: it would go with it.
    await runner.query(`ALTER SEQUENCE delivery_attempts_id_seq OWNED BY delivery_attempts.id`);

    await runner.query(`
      CREATE TABLE inbound_event_keys (
        identity_key text PRIMARY KEY,
        received_at timestamptz NOT NULL
      )`);
    await runner.query(
      `CREATE INDEX inbound_event_keys_received_idx ON inbound_event_keys (received_at)`,
    );
    await runner.query(
      `INSERT INTO inbound_event_keys (identity_key, received_at)
       SELECT identity_key, received_at FROM inbound_events`,
    );
    // Whatever else writes inbound_events (a statement of its own, a later re-keying migration)
    // keeps the keys in step: an insert adds its keys (ingest has claimed them already), a
    // changed identity_key moves its key.
    await runner.query(`
      CREATE FUNCTION inbound_event_keys_stored() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO inbound_event_keys (identity_key, received_at)
        SELECT identity_key, received_at FROM added
        ON CONFLICT (identity_key) DO NOTHING;
        RETURN NULL;
      END $$`);
    await runner.query(`
      CREATE TRIGGER inbound_events_keys AFTER INSERT ON inbound_events
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT
      EXECUTE FUNCTION inbound_event_keys_stored()`);
    await runner.query(`
      CREATE FUNCTION inbound_event_keys_rekeyed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.identity_key IS DISTINCT FROM OLD.identity_key THEN
          DELETE FROM inbound_event_keys WHERE identity_key = OLD.identity_key;
          INSERT INTO inbound_event_keys (identity_key, received_at)
          VALUES (NEW.identity_key, NEW.received_at)
          ON CONFLICT (identity_key) DO NOTHING;
        END IF;
        RETURN NULL;
      END $$`);
    await runner.query(`
      CREATE TRIGGER inbound_events_rekeyed AFTER UPDATE OF identity_key ON inbound_events
      FOR EACH ROW EXECUTE FUNCTION inbound_event_keys_rekeyed()`);
    await runner.query(`
      CREATE TABLE event_keys (
        idempotency_key text PRIMARY KEY,
        created_at timestamptz NOT NULL
      )`);
    await runner.query(`CREATE INDEX event_keys_created_idx ON event_keys (created_at)`);
    await runner.query(
      `INSERT INTO event_keys (idempotency_key, created_at)
       SELECT idempotency_key, created_at FROM events WHERE idempotency_key IS NOT NULL`,
    );

    await runner.query(
      `DROP TABLE delivery_attempts_unpartitioned, deliveries_unpartitioned, events_unpartitioned,
         inbound_events_unpartitioned`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER inbound_events_keys ON inbound_events`);
    await runner.query(`DROP TRIGGER inbound_events_rekeyed ON inbound_events`);
    await runner.query(`DROP FUNCTION inbound_event_keys_stored()`);
    await runner.query(`DROP FUNCTION inbound_event_keys_rekeyed()`);
    for (const { table } of [...TABLES].reverse()) {
      const old = `${table}_partitioned`;
      const indexes = (await runner.query(
        `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
         WHERE x.indrelid = $1::regclass`,
        [table],
      )) as { name: string; def: string }[];
      const triggers = (await runner.query(
        `SELECT tgname AS name, pg_get_triggerdef(oid) AS def FROM pg_trigger
         WHERE tgrelid = $1::regclass AND NOT tgisinternal AND tgparentid = 0`,
        [table],
      )) as { name: string; def: string }[];
      await runner.query(`ALTER TABLE ${table} RENAME TO ${old}`);
      for (const trigger of triggers) await runner.query(`DROP TRIGGER ${trigger.name} ON ${old}`);
      for (const index of indexes) {
        await runner.query(`ALTER INDEX ${index.name} RENAME TO ${index.name}_partitioned`);
      }
      await runner.query(
        `CREATE TABLE ${table} (LIKE ${old} INCLUDING DEFAULTS INCLUDING CONSTRAINTS
           INCLUDING STORAGE INCLUDING COMPRESSION)`,
      );
      await runner.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (id)`);
      await runner.query(`INSERT INTO ${table} SELECT * FROM ${old}`);
      for (const index of indexes) {
        const plain = PLAIN_INDEXES.some((sql) => sql.includes(` ${index.name} `));
        if (index.name === `${table}_pkey` || plain) continue;
        await runner.query(index.def.replace(/ ON ONLY /, ' ON '));
      }
      for (const trigger of triggers) await runner.query(trigger.def);
    }
    await runner.query(`ALTER SEQUENCE delivery_attempts_id_seq OWNED BY delivery_attempts.id`);
    await runner.query(
      `DROP TABLE delivery_attempts_partitioned, deliveries_partitioned, events_partitioned,
         inbound_events_partitioned, inbound_event_keys, event_keys`,
    );
    await runner.query(
      `ALTER TABLE events ADD CONSTRAINT events_idempotency_key_uq UNIQUE (idempotency_key)`,
    );
    await runner.query(
      `ALTER TABLE inbound_events ADD CONSTRAINT inbound_events_identity_key_uq UNIQUE (identity_key)`,
    );
    await runner.query(
      `CREATE UNIQUE INDEX deliveries_event_webhook_uq ON deliveries (event_id, webhook_id)`,
    );
    await runner.query(
      `CREATE UNIQUE INDEX delivery_attempts_delivery_attempt_uq ON delivery_attempts (delivery_id, attempt)`,
    );
    await runner.query(
      `ALTER TABLE deliveries ADD CONSTRAINT deliveries_webhook_id_fkey FOREIGN KEY (webhook_id)
       REFERENCES webhooks (id) ON DELETE CASCADE`,
    );
    await runner.query(
      `ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_fkey FOREIGN KEY (event_id)
       REFERENCES events (id) ON DELETE CASCADE`,
    );
    await runner.query(
      `ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_delivery_id_fkey
       FOREIGN KEY (delivery_id) REFERENCES deliveries (id) ON DELETE CASCADE`,
    );
    await runner.query(`DROP FUNCTION history_partitions_make(regclass, timestamptz, interval)`);
  }
}
