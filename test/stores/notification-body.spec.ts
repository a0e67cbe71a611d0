import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { parsePrecise } from '../../src/common/precise-json';
import { loadConfig } from '../../src/config/load-config';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { EventSource, deliveryBody, toJsonb } from '../../src/delivery-record/delivery-body';
import { eventBodyJsonb } from '../../src/delivery-record/fan-out-filter';
import { TestDatabase, createTestDatabase } from '../support/test-db';
import { TEST_REDIS_URL } from '../support/test-app';

/**
 * The notification body has two builders: TypeScript (delivery-body.ts), which writes the bytes
 * every attempt sends and which the in-memory fakes match filters against, and SQL
 * (eventBodyJsonb), which the fan-out statements match filters against in PostgreSQL. They must
 * describe the same JSON value, or a filter would pass an event in one and not in the other.
 * Where jsonb cannot hold what was sent (U+0000, unpaired surrogates, numbers past numeric's
 * range) both sides see the record's replacement (toJsonb), never the raw text.
 */
const SOURCE: EventSource = {
  platform: 'zoom',
  event: 'meeting.started',
  event_ts: 1735725605123,
  account_id: 'AAAAAAAAAAAAAAAAAAAAAA',
  tracking_id: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
  via: 'webhook',
};

const CASES: { name: string; data: Record<string, unknown>; source?: EventSource | null }[] = [
  { name: 'plain text and numbers', data: { id: '85746065432', type: 2, duration: 30 } },
  { name: 'non-ASCII text', data: { topic: 'Réunion ☕ 会議 🎉 "quoted" \\ slash' } },
  { name: 'nested objects, arrays and nulls', data: { a: [1, { b: null }, []], c: {} } },
  {
    name: 'numbers as the platform wrote them',
    data: parsePrecise(
      '{"big":9223372036854775807,"dec":1.50,"exp":1E2,"neg":-0,"tiny":1e-7}',
    ) as Record<string, unknown>,
  },
  { name: 'text jsonb cannot hold', data: { topic: 'nul:\u0000 lone:\ud800' } },
  { name: 'no source (tests, operational events)', data: { n: 1 }, source: null },
];

describe('the notification body as filters see it: TypeScript and SQL alike', () => {
  let database: TestDatabase;
  let db: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
    });
    db = new DataSource({ ...dataSourceOptions(config), migrationsRun: true, logging: false });
    await db.initialize();
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it.each(CASES)('$name', async ({ data, source }) => {
    const event = {
      id: randomUUID(),
      kind: 'job.started',
      // Milliseconds matter: the SQL side prints created_at itself.
      createdAt: new Date(Date.UTC(2026, 0, 1, 10, 0, 5, 7)),
      data,
      source: source === undefined ? SOURCE : source,
    };
    await db.query(
      `INSERT INTO events (id, kind, data, source, created_at, body)
       VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6)`,
      [
        event.id,
        event.kind,
        toJsonb(event.data),
        event.source === null ? null : toJsonb(event.source),
        event.createdAt,
        deliveryBody(event),
      ],
    );
    const [row] = (await db.query(
      `SELECT ${eventBodyJsonb('e')} = $2::jsonb AS same, ${eventBodyJsonb('e')}::text AS sql
       FROM events e WHERE e.id = $1`,
      [event.id, toJsonb(parsePrecise(deliveryBody(event)))],
    )) as { same: boolean; sql: string }[];
    expect({ same: row.same, sql: row.sql }).toEqual({ same: true, sql: row.sql });
  });
});
