import {
  ACCOUNT_ID,
  ZoomEvent,
  meetingEnded,
  participantJoined,
  participantLeft,
} from '../scripts/platform/zoom-events';
import { AttendanceStore } from '../src/attendance/attendance.store';
import { MIGRATIONS } from '../src/database/migrations';
import { Attendance1767000500731 } from '../src/database/migrations/1767000500731-attendance';
import { RetentionService } from '../src/retention/retention.service';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import {
  TestDatabase,
  createTestDatabase,
  migratedDataSource,
  queryDatabase,
} from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

const BEFORE = 'Before/attendance+1==';
const ELSEWHERE = 'Else+where/2==';

/** The ended event of `uuid`, ending at 10:30:05 (the sample's start stays 10:00:05). */
function ended(uuid: string): ZoomEvent {
  const event = meetingEnded(uuid);
  (event.payload as { object: Record<string, unknown> }).object.end_time = '2025-01-01T10:30:05Z';
  return event;
}

/** Stores `events` as processed inbound events, as an earlier version of the service did. */
async function stored(url: string, events: ZoomEvent[], accountId = ACCOUNT_ID): Promise<void> {
  for (const [i, event] of events.entries()) {
    await queryDatabase(
      url,
      `INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload, processed_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, now())`,
      [
        event.event,
        `history|${JSON.stringify(event.payload)}|${i}`,
        event.event_ts,
        accountId,
        event,
      ],
    );
  }
}

/**
 * Attendance over time (docs/attendance.md): occurrences that ended before attendance existed
 * are computed after the upgrade (readable, not sent), and attendance goes with retention and
 * with a platform account that left.
 */
describe('attendance of occurrences before it existed, and its retention', () => {
  let db: TestDatabase;
  let receiver: Receiver;
  let t: TestApp;
  let path: string;

  beforeAll(async () => {
    // A database as the version before attendance left it, holding a finished meeting.
    db = await createTestDatabase();
    const before = await migratedDataSource(
      db.url,
      MIGRATIONS.slice(0, MIGRATIONS.indexOf(Attendance1767000500731)),
    );
    await before.destroy();
    await stored(db.url, [
      participantJoined(BEFORE, 1, '2025-01-01T10:01:00Z'),
      participantLeft(BEFORE, 1, '2025-01-01T10:11:00Z'),
      participantJoined(BEFORE, 2, '2025-01-01T10:05:00Z'),
      ended(BEFORE),
    ]);

    receiver = await startReceiver();
    t = await startTestApp({ database: db, env: { ATTENDANCE_SETTLE_MS: '300' } });
    const route = receiver.route({}, 'attendance');
    path = route.path;
    await createWebhook(t, { url: route.url, events: ['meeting.attendance'] });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const row = async (uuid: string) =>
    (
      await queryDatabase<{ revision: number; published: number; pending: boolean }>(
        t.database.url,
        `SELECT revision, published_revision AS published, changes > computed_changes AS pending
         FROM attendance WHERE uuid = $1`,
        [uuid],
      )
    )[0];

  it('computes an occurrence that ended before the upgrade: readable through the API, not sent; a later event sends revision 2', async () => {
    await waitFor(
      async () => {
        const r = await row(BEFORE);
        return r && !r.pending && r.revision === 1;
      },
      { timeoutMs: 30_000, what: 'the backfilled attendance' },
    );
    const token = await t.token('admin');
    const res = await request(t.baseUrl, 'GET', `/api/attendance/${encodeURIComponent(BEFORE)}`, {
      token,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ uuid: BEFORE, revision: 1, participants_count: 2 });
    expect((res.body.participants as Json[]).map((p) => p.first_join)).toEqual([
      '2025-01-01T10:01:00Z',
      '2025-01-01T10:05:00Z',
    ]);
    // Stored, not news: no meeting.attendance event for it.
    const [{ n }] = await queryDatabase<{ n: number }>(
      t.database.url,
      `SELECT count(*)::int AS n FROM events WHERE kind = 'meeting.attendance'`,
    );
    expect(n).toBe(0);

    // Participant 2's leave, late: its next revision goes out like any other.
    const late = await sendZoomEvent(t.baseUrl, participantLeft(BEFORE, 2, '2025-01-01T10:25:00Z'));
    expect(late.status).toBe(200);
    const second = await waitFor(
      () =>
        receiver
          .requests(path)
          .map((r) => JSON.parse(r.body.toString('utf8')) as Json)
          .find((body) => body.data.uuid === BEFORE),
      { timeoutMs: 30_000, what: 'revision 2 of the backfilled attendance' },
    );
    expect(second.data).toMatchObject({ revision: 2, participants_count: 2 });
    expect(second.data.participants[1].sessions).toEqual([
      { join_time: '2025-01-01T10:05:00Z', leave_time: '2025-01-01T10:25:00Z' },
    ]);
  });

  it('deletes attendance with its inputs once its last input is older than RETENTION_DAYS, and an account that left', async () => {
    const recent = 'Recent/3==';
    await stored(t.database.url, [
      participantJoined(recent, 1, '2025-01-02T10:01:00Z'),
      ended(recent),
    ]);
    await stored(t.database.url, [ended(ELSEWHERE)], 'another-account');
    await waitFor(async () => (await row(recent)) && (await row(ELSEWHERE)), {
      what: 'the attendance rows',
    });
    // BEFORE's last input stored 31 days ago (RETENTION_DAYS is 30 by default).
    await queryDatabase(
      t.database.url,
      `UPDATE attendance SET settle_from = now() - interval '31 days' WHERE uuid = $1`,
      [BEFORE],
    );
    const deleted = await waitFor(
      async () => (await t.app.get(RetentionService).run()) ?? undefined,
      {
        what: 'a retention run of this test (the one at start may hold the lock)',
      },
    );
    expect(deleted.attendance).toBe(1);
    expect(await row(BEFORE)).toBeUndefined();
    expect(await row(recent)).toBeDefined();

    // A platform account that left: its attendance up to then goes, another account's stays.
    const store = t.app.get(AttendanceStore, { strict: false });
    expect(await store.deleteForAccount(ACCOUNT_ID, new Date(0))).toBe(0);
    expect(await store.deleteForAccount(ACCOUNT_ID)).toBe(1);
    expect(await row(recent)).toBeUndefined();
    expect(await row(ELSEWHERE)).toBeDefined();
  });
});
