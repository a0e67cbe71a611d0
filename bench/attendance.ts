/**
 * Meeting attendance (docs/attendance.md) of one occurrence with 10,000 participants and 30,000
 * join and leave events (each joins, leaves ten minutes later and joins again, a session left
 * open), computed by the app as deployed (compiled, bench/sides.ts) in its own process: the time
 * from its ended event being stored to its attendance being stored (goal: under 2 s; it
 * includes up to one sweep of the settle timer, 100 ms at ATTENDANCE_SETTLE_MS=0) and the
 * service's peak RSS meanwhile (goal: under 250 MB); and, beside it, the peak until its 3.8 MB
 * meeting.attendance is delivered (the dispatcher's fan-out and send, not the computation).
 * Then the same again with nothing changed: computed, and nothing sent.
 *
 *   npx ts-node --transpile-only bench/attendance.ts [participants=10000]
 *
 * The events are written straight into inbound_events (as processed), so that only the
 * computation is measured, not 30,000 ingests; the trigger and the reads are the service's own.
 */
import { randomBytes } from 'node:crypto';
import { startReceiver } from '../test/support/receiver';
import { CLIENTS, deleteRedisKeys } from '../test/support/test-app';
import { createTestDatabase, queryDatabase } from '../test/support/test-db';
import { recordTarget } from './results';
import { build, spawnDeployed } from './sides';
import { rssMbOf, sampleRss, stopChild, subscribe } from './support';

const PARTICIPANTS = Math.max(1, Number(process.argv[2] ?? 10_000));
const GOAL_MS = 2000;
const GOAL_RSS_MB = 250;
const UUID = 'Bench/attendance+occurrence==';

async function poll<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One statement: every participant's join, leave and rejoin, as the platform's bodies. */
const PARTICIPANT_EVENTS_SQL = `
  INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload, processed_at)
  SELECT e.event, 'bench|' || g || '|' || e.n, e.at_ms, 'bench-account',
    jsonb_build_object('event', e.event, 'event_ts', e.at_ms, 'payload', jsonb_build_object(
      'account_id', 'bench-account',
      'object', jsonb_build_object('id', '85746065432', 'uuid', $1::text, 'topic', 'Bench',
        'host_id', 'h', 'participant', jsonb_build_object(
          'user_id', (16000000 + g)::text, 'user_name', 'Participant ' || g,
          'email', 'p' || g || '@example.com', 'participant_user_id', '',
          'customer_key', 'crm-' || g, e.field,
          to_char(to_timestamp(e.at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))))),
    now()
  FROM generate_series(1, $2::int) g,
    LATERAL (VALUES
      (1, 'meeting.participant_joined', 'join_time', $3::bigint + (g % 3600) * 1000),
      (2, 'meeting.participant_left', 'leave_time', $3::bigint + (g % 3600 + 600) * 1000),
      (3, 'meeting.participant_joined', 'join_time', $3::bigint + (g % 3600 + 660) * 1000)
    ) AS e(n, event, field, at_ms)`;

const ENDED_SQL = `
  INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload, processed_at)
  VALUES ('meeting.ended', 'bench|ended|' || $2::text, $3::bigint, 'bench-account',
    jsonb_build_object('event', 'meeting.ended', 'event_ts', $3::bigint, 'payload',
      jsonb_build_object('account_id', 'bench-account', 'object', jsonb_build_object(
        'id', '85746065432', 'uuid', $1::text, 'topic', 'Bench', 'host_id', 'h',
        'start_time', '2025-01-01T10:00:00Z', 'end_time', '2025-01-01T12:00:00Z'))),
    now())`;

const ROW_SQL = `
  SELECT revision, published_revision, computed_changes::int AS computed,
    changes::int AS changes,
    (extract(epoch FROM computed_at - settle_from) * 1000)::float8 AS ms
  FROM attendance WHERE uuid = $1`;

interface Row {
  revision: number;
  published_revision: number;
  computed: number;
  changes: number;
  ms: number;
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = `mebbench:attendance:${randomBytes(4).toString('hex')}`;
  const receiver = await startReceiver();
  build();
  const { child, url } = await spawnDeployed(db.url, prefix, {
    LOG_LEVEL: 'warn',
    AUTH_CLIENTS: JSON.stringify([CLIENTS.alpha]),
    ATTENDANCE_SETTLE_MS: '0',
    RECONCILE_INTERVAL_MS: '0',
  });
  try {
    const route = receiver.route({}, 'attendance');
    await subscribe(url, CLIENTS.alpha, {
      url: route.url,
      events: ['meeting.attendance'],
      secret: 'bench-secret-0123456789',
    });
    const start = Date.parse('2025-01-01T10:00:00Z');
    await queryDatabase(db.url, PARTICIPANT_EVENTS_SQL, [UUID, PARTICIPANTS, start]);
    const row = async () => (await queryDatabase<Row>(db.url, ROW_SQL, [UUID]))[0];

    const idle = rssMbOf(child.pid);
    const rss = sampleRss(child.pid, 10);
    const computeRss = sampleRss(child.pid, 10);
    const began = Date.now();
    await queryDatabase(db.url, ENDED_SQL, [UUID, '1', Date.parse('2025-01-01T12:00:00Z')]);
    const first = await poll(
      async () => ((await row())?.revision === 1 ? row() : undefined),
      'revision 1',
    );
    const stored = Date.now() - began;
    const computePeak = computeRss.stop();
    await poll(
      async () => (receiver.requests(route.path).length === 1 ? true : undefined),
      'its delivery',
    );
    const delivered = Date.now() - began;
    const peak = rss.stop();
    const bytes = receiver.requests(route.path)[0].body.length;

    // The same inputs again (a redelivered ended event under another key): nothing changes.
    await queryDatabase(
      db.url,
      ENDED_SQL.replace("'meeting.ended', 'bench", "'webinar.ended', 'bench"),
      [UUID, '2', Date.parse('2025-01-01T12:00:00Z')],
    );
    const again = await poll(async () => {
      const r = await row();
      return r && r.computed === r.changes && r.changes > 1 ? r : undefined;
    }, 'the recomputation');

    const met = first.ms < GOAL_MS && computePeak < GOAL_RSS_MB;
    console.log(
      `attendance of ${PARTICIPANTS} participants from ${PARTICIPANTS * 3} events: stored ` +
        `${first.ms.toFixed(0)} ms after the ended event (database clock; ${stored} ms here), ` +
        `delivered after ${delivered} ms (${(bytes / 1024 / 1024).toFixed(1)} MB body) ` +
        `(goal < ${GOAL_MS} ms: ${first.ms < GOAL_MS ? 'met' : 'MISSED'}); ` +
        `service RSS idle ${idle.toFixed(0)} MB, peak ${computePeak.toFixed(0)} MB until ` +
        `stored and ${peak.toFixed(0)} MB until delivered ` +
        `(goal < ${GOAL_RSS_MB} while computing: ${computePeak < GOAL_RSS_MB ? 'met' : 'MISSED'}); ` +
        `recomputed with nothing changed: revision ${again.revision}, ` +
        `${receiver.requests(route.path).length} delivery in all`,
    );
    recordTarget({
      target: `attendance of one occurrence with ${PARTICIPANTS} participants and ${PARTICIPANTS * 3} join and leave events computed in under 2 s, RSS under 250 MB`,
      figure: `${first.ms.toFixed(0)} ms from the ended event stored to the attendance stored; peak RSS ${computePeak.toFixed(0)} MB computing, ${peak.toFixed(0)} MB until delivered`,
      baseline: `${GOAL_MS} ms, ${GOAL_RSS_MB} MB`,
      ratio: '-',
      met: met && again.revision === 1,
    });
  } finally {
    await stopChild(child);
    await receiver.close();
    await db.drop();
    await deleteRedisKeys(prefix);
  }
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
