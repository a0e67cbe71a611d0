import { clientToken } from '../scripts/client-token';
import {
  ACCOUNT_ID,
  ZoomEvent,
  asWebinar,
  meetingEnded,
  participantJoined,
  participantLeft,
} from '../scripts/platform/zoom-events';
import { catalogChecker } from './support/event-schemas';
import { FakeZoom } from './support/fake-zoom';
import { DayMeeting, FakeReports } from './support/fake-zoom-reports';
import { FakeConnection, FakeZoomWs } from './support/fake-zoom-ws';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, deleteRedisKeys, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';
import { EXIT } from '../src/cli/exit-codes';
import { withCli } from './support/cli';
import { EVENT_TYPES } from '../src/webhooks/event-catalog';
import { CLIENTS } from './support/test-app';

const HOUR = 3_600_000;

/** Attendance readers holding one platform account each (docs/accounts.md#whose-events). */
const TENANTS = {
  ours: {
    client_id: 'ours',
    client_secret: 'ours-secret-0123456789ab',
    scopes: 'attendance:read',
    accounts: [ACCOUNT_ID],
  },
  elsewhere: {
    client_id: 'elsewhere',
    client_secret: 'elsewhere-secret-012345',
    scopes: 'attendance:read',
    accounts: ['some-other-account'],
  },
};
const check = catalogChecker([...EVENT_TYPES]);

const objectOf = (event: ZoomEvent) =>
  (event.payload as { object: Record<string, unknown> }).object;

/** The ended event of `uuid`, ending at `end` (the sample's start stays 10:00:05). */
function ended(uuid: string, end = '2025-01-01T10:30:05Z'): ZoomEvent {
  const event = meetingEnded(uuid);
  objectOf(event).end_time = end;
  return event;
}

/** A participant event as a redelivery would carry it: the same, sent again. */
const again = (event: ZoomEvent): ZoomEvent => JSON.parse(JSON.stringify(event)) as ZoomEvent;

/**
 * meeting.attendance end to end (docs/attendance.md): participant events in by every source,
 * the attendance out once the occurrence has ended and settled, a revision for each later
 * change and none for what changes nothing; the API shows the latest.
 */
describe('meeting attendance (webhooks, socket, reconciliation)', () => {
  let zoom: FakeZoom;
  let reports: FakeReports;
  let platform: FakeZoomWs;
  let receiver: Receiver;
  let t: TestApp;
  let path: string;
  let reader: string;

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    reports = new FakeReports(zoom);
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    receiver = await startReceiver();
    t = await startTestApp({
      env: {
        ...zoom.env(),
        ...platform.env(1000),
        ATTENDANCE_SETTLE_MS: '300',
        RECONCILE_INTERVAL_MS: '0',
        RECONCILE_MAX_RPS: '50',
        AUTH_CLIENTS: JSON.stringify([...Object.values(CLIENTS), ...Object.values(TENANTS)]),
      },
    });
    const route = receiver.route({}, 'attendance');
    path = route.path;
    await createWebhook(t, { url: route.url, events: ['meeting.attendance'] });
    reader = await t.token('admin');
  });
  afterAll(async () => {
    await t?.close();
    await platform?.close();
    await receiver?.close();
    await zoom?.close();
  });

  /** The meeting.attendance bodies received for `uuid`, in the order they came. */
  const attendanceOf = (uuid: string): Json[] =>
    receiver
      .requests(path)
      .map((r) => JSON.parse(r.body.toString('utf8')) as Json)
      .filter((body) => body.data.uuid === uuid);

  const revision = (uuid: string, n: number): Promise<Json> =>
    waitFor(() => attendanceOf(uuid).find((body) => body.data.revision === n), {
      timeoutMs: 30_000,
      what: `revision ${n} of ${uuid}'s attendance`,
    });

  const get = (uuid: string, token = reader) =>
    request(t.baseUrl, 'GET', `/api/attendance/${encodeURIComponent(uuid)}`, { token });

  /** Waits until every stored input of `uuid` has been computed; resolves to its revision. */
  const settled = async (uuid: string): Promise<number> => {
    const row = await waitFor(
      async () => {
        const [r] = await queryDatabase<{ pending: boolean; revision: number; published: number }>(
          t.database.url,
          `SELECT changes > computed_changes AS pending, revision, published_revision AS published
           FROM attendance WHERE uuid = $1`,
          [uuid],
        );
        return r && !r.pending && r.revision === r.published && r;
      },
      { timeoutMs: 30_000, what: `${uuid} settled` },
    );
    return row.revision;
  };

  const send = async (event: ZoomEvent) => {
    const res = await sendZoomEvent(t.baseUrl, event);
    expect(res.status).toBe(200);
  };

  it('delivers the attendance of a meeting whose events came by webhook shuffled and twice, then its revisions', async () => {
    const uuid = '/Ab+cD//eF9+gh==';
    const join1 = participantJoined(uuid, 1, '2025-01-01T10:01:40Z');
    const leave1 = participantLeft(uuid, 1, '2025-01-01T10:11:40Z');
    const rejoin1 = participantJoined(uuid, 1, '2025-01-01T10:15:00Z');
    const join2 = participantJoined(uuid, 2, '2025-01-01T10:05:00Z');
    // Out of order, one redelivered, and participant 1's final leave never comes.
    for (const event of [leave1, join2, join1, again(leave1), rejoin1, again(join2)]) {
      await send(event);
    }
    expect((await get(uuid)).status).toBe(404);
    await send(ended(uuid));

    const first = await revision(uuid, 1);
    expect(check(JSON.stringify(first))).toEqual([]);
    expect(first.event).toBe('meeting.attendance');
    expect(first.source).toMatchObject({ event: 'meeting.ended', via: 'webhook' });
    expect(first.data).toMatchObject({
      uuid,
      revision: 1,
      id: '85746065432',
      end_time: '2025-01-01T10:30:05Z',
      participants_count: 2,
    });
    const [p1, p2] = first.data.participants as Json[];
    expect(p1).toMatchObject({
      user_id: objectOf(join1).participant && (objectOf(join1).participant as Json).user_id,
      sessions: [
        { join_time: '2025-01-01T10:01:40Z', leave_time: '2025-01-01T10:11:40Z' },
        { join_time: '2025-01-01T10:15:00Z', leave_time: '2025-01-01T10:30:05Z', open: true },
      ],
      first_join: '2025-01-01T10:01:40Z',
      last_leave: '2025-01-01T10:30:05Z',
      duration_seconds: 600 + 905,
    });
    expect(p2).toMatchObject({ first_join: '2025-01-01T10:05:00Z', duration_seconds: 1505 });

    const res = await get(uuid);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...first.data, computed_at: expect.any(String) });

    // A late leave of participant 1: revision 2 closes the open session.
    await send(participantLeft(uuid, 1, '2025-01-01T10:20:00Z'));
    const second = await revision(uuid, 2);
    expect(second.data.participants[0].sessions[1]).toEqual({
      join_time: '2025-01-01T10:15:00Z',
      leave_time: '2025-01-01T10:20:00Z',
    });
    expect((await get(uuid)).body.revision).toBe(2);

    // A redelivery (collapsed at the door), and a new event that changes nothing (a webinar
    // twin of a join already counted): computed, and nothing sent.
    await send(again(join1));
    await send(asWebinar(again(join2)));
    expect(await settled(uuid)).toBe(2);
    expect(attendanceOf(uuid).map((body) => body.data.revision)).toEqual([1, 2]);
  });

  it('shows attendance through the CLI: meb attendance list and get <uuid>', async () => {
    await withCli(t.baseUrl, async (meb) => {
      const { client_id, client_secret } = CLIENTS.admin;
      expect(
        (await meb('login', '--client-id', client_id, '--client-secret', client_secret)).code,
      ).toBe(EXIT.ok);
      const uuid = '/Ab+cD//eF9+gh==';
      const got = await meb('--json', 'attendance', 'get', uuid);
      expect(got.code).toBe(EXIT.ok);
      expect(JSON.parse(got.out)).toMatchObject({ uuid, participants_count: 2 });
      const table = await meb('attendance', 'get', uuid);
      expect(table.out).toContain('jchill1@example.com');
      const listed = await meb('--json', 'attendance', 'list');
      expect(JSON.parse(listed.out).data.map((a: Json) => a.uuid)).toContain(uuid);
      const missing = await meb('attendance', 'get', 'never+ended==');
      expect(missing.code).not.toBe(EXIT.ok);
      expect(missing.err).toContain('Attendance not found');
    });
  });

  it('counts participant events that came over the socket', async () => {
    const connection: FakeConnection = await waitFor(
      () => platform.current?.acknowledged && platform.current,
      { timeoutMs: 30_000, what: 'the socket' },
    );
    expect(connection.acknowledged).toBe(true);
    const uuid = 'So+ck/et==';
    platform.push(participantJoined(uuid, 1, '2025-01-01T10:02:00Z'));
    platform.push(participantLeft(uuid, 1, '2025-01-01T10:12:00Z'));
    await waitFor(
      async () =>
        (
          await queryDatabase<{ n: number }>(
            t.database.url,
            `SELECT count(*)::int AS n FROM inbound_events WHERE via = 'websocket'
             AND payload #>> '{payload,object,uuid}' = $1`,
            [uuid],
          )
        )[0].n === 2,
      { what: 'the socket events stored' },
    );
    platform.push(ended(uuid));
    const first = await revision(uuid, 1);
    expect(first.source).toMatchObject({ event: 'meeting.ended', via: 'websocket' });
    expect(first.data.participants[0]).toMatchObject({ duration_seconds: 600 });
  });

  it('sends a webinar occurrence its attendance too, its source the webinar.ended', async () => {
    const uuid = 'Web+in/ar==';
    await send(asWebinar(participantJoined(uuid, 1, '2025-01-01T10:02:00Z')));
    await send(asWebinar(participantLeft(uuid, 1, '2025-01-01T10:07:00Z')));
    await send(asWebinar(ended(uuid)));
    const first = await revision(uuid, 1);
    expect(check(JSON.stringify(first))).toEqual([]);
    expect(first.source).toMatchObject({ event: 'webinar.ended' });
    expect(first.data).toMatchObject({ uuid, participants_count: 1 });
    expect(first.data.participants[0]).toMatchObject({ duration_seconds: 300 });
  });

  it('adds what reconciliation finds to the attendance as its next revision', async () => {
    const start = new Date(Date.now() - 3 * HOUR).toISOString().replace(/\.\d+Z$/, 'Z');
    const [m] = reports.addDay({
      from: start,
      meetings: 1,
      participantsEach: 2,
      durationMs: 20 * 60_000,
    }) as DayMeeting[];
    const uuid = m.meeting.uuid;
    // Participant 1 and the end came by webhook; participant 2 never did.
    const received = reports
      .webhooks(m)
      .filter(
        (event) =>
          event.event === 'meeting.ended' ||
          (objectOf(event).participant as Json | undefined)?.user_name?.endsWith(' 1'),
      );
    for (const event of received) await send(event);
    const first = await revision(uuid, 1);
    expect(first.data.participants_count).toBe(1);

    const run = await request(t.baseUrl, 'POST', '/api/reconciliations', {
      token: reader,
      body: { since: new Date(Date.parse(start) - HOUR).toISOString() },
    });
    expect(run.status).toBe(202);
    const second = await revision(uuid, 2);
    expect(second.data.participants_count).toBe(2);
    expect(second.data.participants[1].sessions).toHaveLength(1);
    expect(await settled(uuid)).toBe(2);
  });

  it('answers 403 without attendance:read, and lists computed attendance newest first, page by page', async () => {
    const alpha = await t.token('alpha');
    expect((await get('x', alpha)).status).toBe(403);
    const list = await request(t.baseUrl, 'GET', '/api/attendance?limit=1', { token: reader });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({
      uuid: expect.any(String),
      revision: expect.any(Number),
    });
    expect(list.body.data[0].participants).toBeUndefined();
    // Newest end first, page by page: the second page goes on past the first.
    const everything = await request(t.baseUrl, 'GET', '/api/attendance', { token: reader });
    const ends = (everything.body.data as Json[]).map((a) => a.end_time as string);
    expect(ends).toEqual([...ends].sort().reverse());
    expect(list.body.next_cursor).not.toBeNull();
    {
      const next = await request(
        t.baseUrl,
        'GET',
        `/api/attendance?limit=1&cursor=${encodeURIComponent(list.body.next_cursor)}`,
        { token: reader },
      );
      expect(next.status).toBe(200);
      expect(next.body.data[0].uuid).toBe(everything.body.data[1].uuid);
    }
    const bad = await request(t.baseUrl, 'GET', '/api/attendance?cursor=nope', { token: reader });
    expect(bad.status).toBe(400);
    // `since` (inclusive) and `until` (exclusive) bound the occurrence's end.
    const newest = ends[0];
    const within = async (query: string) =>
      (
        (await request(t.baseUrl, 'GET', `/api/attendance?${query}`, { token: reader })).body
          .data as Json[]
      ).map((a) => a.end_time as string);
    const at = (end: string) => Date.parse(end);
    expect(await within(`since=${encodeURIComponent(newest)}`)).toEqual(
      ends.filter((end) => at(end) >= at(newest)),
    );
    expect(await within(`until=${encodeURIComponent(newest)}`)).toEqual(
      ends.filter((end) => at(end) < at(newest)),
    );
  });

  it('shows a client only the attendance of the platform accounts it holds', async () => {
    const everything = await request(t.baseUrl, 'GET', '/api/attendance', { token: reader });
    const uuid = (everything.body.data as Json[])[0].uuid as string;
    const ours = await clientToken(t.baseUrl, TENANTS.ours);
    const elsewhere = await clientToken(t.baseUrl, TENANTS.elsewhere);
    expect((await get(uuid, ours)).status).toBe(200);
    expect((await get(uuid, elsewhere)).status).toBe(404);
    const listed = await request(t.baseUrl, 'GET', '/api/attendance', { token: elsewhere });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
  });
});

describe('meeting attendance across a restart', () => {
  it('keeps the settle timer in PostgreSQL: an occurrence that ended before a restart is delivered after it', async () => {
    const receiver = await startReceiver();
    const route = receiver.route({}, 'attendance');
    // A settle long enough that the first process stops before it has passed.
    const env = { ATTENDANCE_SETTLE_MS: '2000' };
    const first = await startTestApp({ env });
    const uuid = 'Re+start/d==';
    try {
      await createWebhook(first, { url: route.url, events: ['meeting.attendance'] });
      for (const event of [participantJoined(uuid, 1, '2025-01-01T10:01:00Z'), ended(uuid)]) {
        expect((await sendZoomEvent(first.baseUrl, event)).status).toBe(200);
      }
      const [row] = await queryDatabase<{ revision: number }>(
        first.database.url,
        'SELECT revision FROM attendance WHERE uuid = $1',
        [uuid],
      );
      expect(row.revision).toBe(0);
    } finally {
      await first.app.close();
    }
    // Another process over the same database, with a Redis that knows nothing of it.
    const second = await startTestApp({ env, database: first.database });
    try {
      const body = await waitFor(
        () =>
          receiver
            .requests(route.path)
            .map((r) => JSON.parse(r.body.toString('utf8')) as Json)
            .find((b) => b.data.uuid === uuid),
        { timeoutMs: 30_000, what: 'the attendance after the restart' },
      );
      expect(body.data).toMatchObject({ revision: 1, participants_count: 1 });
    } finally {
      await second.close();
      await first.database.drop();
      await deleteRedisKeys(first.config.redis.prefix);
      await receiver.close();
    }
  });
});
