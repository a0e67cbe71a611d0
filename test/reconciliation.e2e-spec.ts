import { DataSource } from 'typeorm';
import { ZoomEvent } from '../scripts/platform/zoom-events';
import { ParticipantIdentityKeys1766000100001 } from '../src/database/migrations/1766000100001-participant-identity-keys';
import { ReconcileRedis } from '../src/inbound/sources/reconciliation/reconcile-redis';
import { FakeZoom } from './support/fake-zoom';
import { waitForDeliveriesSucceeded } from './support/deliveries';
import { DayMeeting, FakeReports } from './support/fake-zoom-reports';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { finishedRun, startRun as startRunOf } from './support/reconciliation-runs';
import { queryDatabase } from './support/test-db';
import { SpawnedApp, spawnTestMs, startWorker } from './support/spawn-app';
import { CLIENTS, TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';

const HOUR = 3_600_000;
const SECRET = 'subscriber-secret-0123456789';

/** What makes one platform occurrence: its event, meeting, participant and time. */
function occurrence(event: string, payload: Json): string {
  const object = payload.object ?? {};
  const p = object.participant ?? {};
  const at = p.leave_time ?? p.join_time ?? '';
  return [event, object.uuid, p.user_id ?? '', at === '' ? '' : new Date(at).toISOString()].join(
    '|',
  );
}

const occurrenceOf = (e: ZoomEvent) => occurrence(e.event, e.payload);

interface Setup {
  zoom: FakeZoom;
  reports: FakeReports;
  receiver: Receiver;
  t: TestApp;
  admin: string;
  /** zoom.* deliveries: one per stored platform event. */
  platformPath: string;
  completePath: string;
  reconciledPath: string;
}

/**
 * The most of `times` (ms, as measured here) in any one second: what the platform would count.
 * The budget grants on Redis's clock with a margin (WINDOW_MARGIN_MS) for the varying delay
 * between a grant and the request's arrival.
 */
function mostWithin(times: number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

async function setup(
  env: Record<string, string> = {},
  beforeStart?: (reports: FakeReports) => unknown,
): Promise<Setup> {
  const zoom = await FakeZoom.start();
  const reports = new FakeReports(zoom);
  beforeStart?.(reports);
  const receiver = await startReceiver();
  const t = await startTestApp({
    env: {
      ...zoom.env(),
      RECONCILE_INTERVAL_MS: '0',
      RECONCILE_MAX_RPS: '50',
      RECONCILE_GAP_DELAY_MS: '1000',
      INBOUND_SWEEP_INTERVAL_MS: '200',
      INBOUND_SWEEP_GRACE_MS: '1000',
      ...env,
    },
  });
  const subscribe = async (client: 'alpha' | 'admin', kind: string) => {
    const { url, path } = receiver.route({}, kind.replace(/[.*]/g, '-'));
    const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token: await t.token(client),
      body: { url, events: [kind], secret: SECRET },
    });
    expect(res.status).toBe(201);
    return path;
  };
  return {
    zoom,
    reports,
    receiver,
    t,
    admin: await t.token('admin'),
    platformPath: await subscribe('alpha', 'zoom.*'),
    completePath: await subscribe('alpha', 'operation.complete'),
    reconciledPath: await subscribe('admin', 'bridge.reconciliation.completed'),
  };
}

async function teardown(s: Setup | undefined): Promise<void> {
  await s?.t.close();
  await s?.receiver.close();
  await s?.zoom.close();
}

const bodies = (s: Setup, path: string): Json[] =>
  s.receiver.requests(path).map((r) => JSON.parse(r.body.toString('utf8')));

const startRun = (s: Setup, body: Record<string, unknown>): Promise<Json> =>
  startRunOf({ baseUrl: s.t.baseUrl, admin: s.admin }, body);

const finished = (s: Setup, id: string, timeoutMs?: number): Promise<Json> =>
  finishedRun({ baseUrl: s.t.baseUrl, admin: s.admin }, id, timeoutMs);

/** Per platform event name, how many of `events`. */
function countByEvent(events: ZoomEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.event] = (counts[e.event] ?? 0) + 1;
  return counts;
}

async function sendAll(s: Setup, events: ZoomEvent[]): Promise<void> {
  for (const event of events) {
    const res = await sendZoomEvent(s.t.baseUrl, event);
    expect(res.status).toBe(200);
  }
}

describe('reconciliation: what the platform never delivered', () => {
  let s: Setup;
  let day: DayMeeting[];
  let received: ZoomEvent[];
  let missed: ZoomEvent[];
  let first: Json;
  const since = () => new Date(Date.now() - 4 * HOUR).toISOString();

  beforeAll(async () => {
    s = await setup();
    day = s.reports.addDay({
      from: new Date(Date.now() - 3 * HOUR).toISOString(),
      meetings: 6,
      webinars: 2,
      participantsEach: 2,
      recordingEvery: 3,
    });
    const all = day.flatMap((m) => s.reports.webhooks(m));
    received = all.filter((_, i) => i % 2 === 0);
    missed = all.filter((_, i) => i % 2 === 1);
    await sendAll(s, received);
    await waitFor(() => bodies(s, s.platformPath).length >= received.length, {
      timeoutMs: 30_000,
      what: `the ${received.length} received events delivered`,
    });
    const run = await startRun(s, { since: since(), dry_run: false });
    first = await finished(s, run.id);
  }, 120_000);
  afterAll(() => teardown(s));

  it('creates exactly the missed half, each delivered once with source.via "reconciliation"', async () => {
    expect(first).toMatchObject({
      trigger: 'manual',
      status: 'succeeded',
      dry_run: false,
      errors: [],
    });
    expect(first.created).toEqual(countByEvent(missed));
    expect(first.missing).toEqual(countByEvent(missed));
    expect(first.checked).toEqual({
      meetings: 6,
      webinars: 2,
      participants: 16,
      recordings: day.filter((m) => m.recording).length,
    });
    const total = received.length + missed.length;
    const delivered = await waitFor(
      () => {
        const seen = bodies(s, s.platformPath);
        return seen.length >= total ? seen : undefined;
      },
      { timeoutMs: 30_000, what: `${total} zoom.* deliveries` },
    );
    // Per occurrence, its notifications by id: a delivery sent again (at least once: the receiver
    // answered after DELIVERY_TIMEOUT_MS on a loaded machine) is the same notification.
    const byOccurrence = new Map<string, Json[]>();
    const ids = new Set<string>();
    for (const body of delivered) {
      if (ids.has(body.id)) continue;
      ids.add(body.id);
      const key = occurrence(body.event.slice('zoom.'.length), body.data);
      byOccurrence.set(key, [...(byOccurrence.get(key) ?? []), body]);
    }
    for (const event of received) {
      const got = byOccurrence.get(occurrenceOf(event)) ?? [];
      expect({ occurrence: occurrenceOf(event), vias: got.map((b) => b.source.via) }).toEqual({
        occurrence: occurrenceOf(event),
        vias: ['webhook'],
      });
    }
    for (const event of missed) {
      const got = byOccurrence.get(occurrenceOf(event)) ?? [];
      expect({ occurrence: occurrenceOf(event), vias: got.map((b) => b.source.via) }).toEqual({
        occurrence: occurrenceOf(event),
        vias: ['reconciliation'],
      });
    }
    expect(ids.size).toBe(total);
  });

  it('runs the recording automation for a reconciled recording.completed', async () => {
    const recorded = day.filter((m) => m.recording).map((m) => m.meeting.uuid);
    const complete = await waitFor(
      () => {
        const got = bodies(s, s.completePath);
        return got.length >= recorded.length ? got : undefined;
      },
      { timeoutMs: 30_000, what: `operation.complete for ${recorded.length} recordings` },
    );
    expect(complete.map((b) => b.data.uuid).sort()).toEqual([...recorded].sort());
    const reconciled = missed.filter((e) => e.event === 'recording.completed');
    expect(reconciled.length).toBeGreaterThan(0);
    for (const event of reconciled) {
      const body = complete.find((b) => b.data.uuid === (event.payload.object as Json).uuid);
      expect(body.source.via).toBe('reconciliation');
      expect(body.data.files.map((f: Json) => f.id)).toEqual([
        `${(event.payload.object as Json).id}-mp4`,
      ]);
    }
  });

  it('tells bridge:admin subscribers that the run completed', async () => {
    const told = await waitFor(
      () => bodies(s, s.reconciledPath).find((b) => b.data.id === first.id),
      { timeoutMs: 30_000, what: 'bridge.reconciliation.completed' },
    );
    expect(told).toMatchObject({
      event: 'bridge.reconciliation.completed',
      data: {
        id: first.id,
        trigger: 'manual',
        since: first.since,
        until: first.until,
        status: 'succeeded',
        created: first.created,
      },
      source: null,
    });
  });

  it('creates nothing on a second run, and a late platform retry of a reconciled one is a duplicate', async () => {
    const before = bodies(s, s.platformPath).length;
    const again = await finished(s, (await startRun(s, { since: since() })).id);
    expect(again).toMatchObject({ status: 'succeeded', created: {}, missing: {} });
    const late = await sendZoomEvent(s.t.baseUrl, missed[1]);
    expect(late.status).toBe(200);
    expect(late.body).toEqual({ status: 'duplicate' });
    const [{ n }] = await queryDatabase<{ n: string }>(
      s.t.database.url,
      `SELECT count(*) AS n FROM inbound_events`,
    );
    expect(Number(n)).toBe(received.length + missed.length);
    expect(bodies(s, s.platformPath)).toHaveLength(before);
  });

  it('counts what is missing on a dry run and creates nothing', async () => {
    const more = s.reports.addDay({
      from: new Date(Date.now() - 2.5 * HOUR).toISOString(),
      meetings: 2,
      participantsEach: 1,
    });
    const expected = countByEvent(more.flatMap((m) => s.reports.webhooks(m)));
    const dry = await finished(s, (await startRun(s, { since: since(), dry_run: true })).id);
    expect(dry).toMatchObject({ status: 'succeeded', dry_run: true, created: {} });
    expect(dry.missing).toEqual(expected);
    const rows = await queryDatabase<{ n: string }>(
      s.t.database.url,
      `SELECT count(*) AS n FROM inbound_events WHERE payload #>> '{payload,object,uuid}' = ANY($1)`,
      [more.map((m) => m.meeting.uuid)],
    );
    expect(Number(rows[0].n)).toBe(0);
  });

  it('skips a source the credentials may not read (403): partial, the rest reconciled', async () => {
    const more = s.reports.addDay({
      from: new Date(Date.now() - 2.4 * HOUR).toISOString(),
      meetings: 1,
      webinars: 1,
      participantsEach: 1,
    });
    s.reports.refuse('webinars');
    try {
      const run = await finished(s, (await startRun(s, { since: since() })).id);
      expect(run.status).toBe('partial');
      expect(run.errors).toEqual([
        { source: 'webinars', status: 403, message: expect.stringContaining('scopes') },
      ]);
      // The earlier dry run's two meetings and this one: every meeting event created.
      const meetingEvents = countByEvent(
        [...more.filter((m) => m.family === 'meeting'), ...s.reports.day.slice(-4, -2)].flatMap(
          (m) => s.reports.webhooks(m),
        ),
      );
      expect(run.created).toEqual(meetingEvents);
    } finally {
      s.reports.allow('webinars');
    }
  });

  it("waits a 429's Retry-After before asking again", async () => {
    s.zoom.rateLimitNext(2, { retryAfter: '1' });
    const hitsBefore = s.reports.hits.length;
    const asked = Date.now();
    const run = await finished(s, (await startRun(s, { since: since() })).id);
    expect(run.status).toBe('succeeded');
    const next = s.reports.hits[hitsBefore];
    // Two 429s of one second each came first: no report request went out before they passed.
    expect(next.at - asked).toBeGreaterThanOrEqual(2000);
  });

  it('runs one at a time, oldest first', async () => {
    const a = await startRun(s, { since: since() });
    const b = await startRun(s, { since: since(), dry_run: true });
    let mostRunning = 0;
    await waitFor(
      async () => {
        const list = (
          await request(s.t.baseUrl, 'GET', '/api/reconciliations?limit=2', {
            token: s.admin,
          })
        ).body.data as Json[];
        const running = list.filter((r) => r.status === 'running').length;
        mostRunning = Math.max(mostRunning, running);
        return list.every((r) => r.finished_at) ? list : undefined;
      },
      { timeoutMs: 50_000, intervalMs: 20, what: 'both runs to end' },
    );
    expect(mostRunning).toBeLessThanOrEqual(1);
    const [ra, rb] = [await finished(s, a.id), await finished(s, b.id)];
    expect(Date.parse(rb.started_at)).toBeGreaterThanOrEqual(Date.parse(ra.finished_at));
  });

  it('does not deliver again a participant event stored under the participant_uuid key of before', async () => {
    const [m] = s.reports.addDay({
      from: new Date(Date.now() - 2.3 * HOUR).toISOString(),
      meetings: 1,
      participantsEach: 1,
    });
    const joined = m.participants[0];
    const p = (joined.payload.object as Json).participant;
    // As the previous release stored it: keyed on participant_uuid.
    const oldKey = JSON.stringify([
      joined.event,
      'uuid',
      m.meeting.uuid,
      'participant',
      p.participant_uuid,
      'at',
      p.join_time,
    ]);
    await queryDatabase(
      s.t.database.url,
      `INSERT INTO inbound_events (id, event, identity_key, event_ts, payload, processed_at)
       VALUES (uuid_v7(), $1, $2, $3, $4, now())`,
      [joined.event, oldKey, joined.event_ts, JSON.stringify(joined)],
    );
    // The upgrade: the re-keying migration runs over it (by itself: later migrations may follow).
    const runner = s.t.app.get(DataSource).createQueryRunner();
    try {
      await new ParticipantIdentityKeys1766000100001().up(runner);
    } finally {
      await runner.release();
    }
    const retry = await sendZoomEvent(s.t.baseUrl, joined);
    expect(retry.body).toEqual({ status: 'duplicate' });
    const run = await finished(s, (await startRun(s, { since: since() })).id);
    const expected = countByEvent(s.reports.webhooks(m));
    delete expected['meeting.participant_joined'];
    expect(run.created).toEqual(expected);
  });

  it('lists runs newest first with a cursor, and refuses bad windows naming the field', async () => {
    const page1 = await request(s.t.baseUrl, 'GET', '/api/reconciliations?limit=2', {
      token: s.admin,
    });
    expect(page1.status).toBe(200);
    expect(page1.body.data).toHaveLength(2);
    const page2 = await request(
      s.t.baseUrl,
      'GET',
      `/api/reconciliations?limit=2&cursor=${page1.body.next_cursor}`,
      { token: s.admin },
    );
    const created = [...page1.body.data, ...page2.body.data].map((r: Json) => r.created_at);
    expect(created).toEqual([...created].sort().reverse());
    const bad = async (body: Json, field: string) => {
      const res = await request(s.t.baseUrl, 'POST', '/api/reconciliations', {
        token: s.admin,
        body,
      });
      expect({ status: res.status, fields: res.body.details.map((d: Json) => d.field) }).toEqual({
        status: 400,
        fields: [field],
      });
    };
    await bad({ since: new Date(Date.now() - 40 * 24 * HOUR).toISOString() }, 'since');
    await bad({ since: 'yesterday' }, 'since');
    await bad({ since: since(), until: new Date(Date.now() + HOUR).toISOString() }, 'until');
    await bad({ since: since(), until: new Date(Date.now() - 5 * HOUR).toISOString() }, 'until');
    await bad({ since: since(), dry_run: 'yes' }, 'dry_run');
    const unscoped = await request(s.t.baseUrl, 'GET', '/api/reconciliations', {
      token: await s.t.token('alpha'),
    });
    expect(unscoped.status).toBe(403);
    const missing = await request(
      s.t.baseUrl,
      'GET',
      '/api/reconciliations/00000000-0000-7000-8000-000000000000',
      { token: s.admin },
    );
    expect(missing.status).toBe(404);
  });
});

describe('reconciliation: scheduled, after a WebSocket gap, and across processes', () => {
  let s: Setup;
  let second: TestApp;

  beforeAll(async () => {
    s = await setup(
      {
        RECONCILE_INTERVAL_MS: String(24 * HOUR),
        RECONCILE_LOOKBACK_MS: String(5 * HOUR),
        RECONCILE_SETTLE_MS: String(HOUR),
        RECONCILE_MAX_RPS: '5',
      },
      (reports) =>
        reports.addDay({
          from: new Date(Date.now() - 4 * HOUR).toISOString(),
          meetings: 12,
          participantsEach: 1,
        }),
    );
    second = await startTestApp({
      database: s.t.database,
      queuePrefix: s.t.config.redis.prefix,
      env: {
        ...s.zoom.env(),
        RECONCILE_INTERVAL_MS: String(24 * HOUR),
        RECONCILE_LOOKBACK_MS: String(5 * HOUR),
        RECONCILE_SETTLE_MS: String(HOUR),
        RECONCILE_MAX_RPS: '5',
        RECONCILE_GAP_DELAY_MS: '1000',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await second?.close();
    await teardown(s);
  });

  it('runs the schedule over [now − lookback, now − settle), within RECONCILE_MAX_RPS', async () => {
    const scheduled = await waitFor(
      async () => {
        const list = (await request(s.t.baseUrl, 'GET', '/api/reconciliations', { token: s.admin }))
          .body.data as Json[];
        return list.find((r) => r.trigger === 'schedule' && r.finished_at);
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the scheduled run to end' },
    );
    expect(scheduled.status).toBe('succeeded');
    const window = Date.parse(scheduled.until) - Date.parse(scheduled.since);
    expect(window).toBe(4 * HOUR);
    expect(Date.parse(scheduled.until)).toBeLessThanOrEqual(Date.now() - HOUR);
    expect(scheduled.created['meeting.started']).toBe(12);
    // At most RECONCILE_MAX_RPS requests start in any second (the budget's grants: the next
    // test). Where the platform is, each also carries its time in transit, which a loaded
    // machine makes differ by up to a few hundred ms: at most 5 in any 750 ms there. Without
    // the budget, the run's 13 and more requests would come within a few ms.
    expect(s.reports.hits.length).toBeGreaterThan(12);
    expect(
      mostWithin(
        s.reports.hits.map((h) => h.at),
        750,
      ),
    ).toBeLessThanOrEqual(5);
  });

  it('holds the request budget across processes', async () => {
    const budgets = [s.t, second].map((app) => app.app.get(ReconcileRedis));
    const granted: number[] = [];
    await Promise.all(
      budgets.map(async (budget) => {
        for (let taken = 0; taken < 8;) {
          const wait = await budget.take(5);
          if (wait === 0) {
            granted.push(Date.now());
            taken++;
          } else await new Promise((resolve) => setTimeout(resolve, wait));
        }
      }),
    );
    expect(mostWithin(granted)).toBeLessThanOrEqual(5);
  });

  it('reconciles an ended gap once its delay has passed, and marks the gap', async () => {
    const ended = new Date(Date.now() - 2000);
    const started = new Date(ended.getTime() - 60_000);
    const [gap] = await queryDatabase<{ id: string }>(
      s.t.database.url,
      `INSERT INTO inbound_gaps (started_at, ended_at) VALUES ($1, $2) RETURNING id`,
      [started, ended],
    );
    const marked = await waitFor(
      async () => {
        const [row] = await queryDatabase<{ reconciliation_id: string | null }>(
          s.t.database.url,
          `SELECT reconciliation_id FROM inbound_gaps WHERE id = $1`,
          [gap.id],
        );
        return row.reconciliation_id ?? undefined;
      },
      { timeoutMs: 30_000, what: 'the gap to get its run' },
    );
    const run = await finished(s, marked);
    expect(run).toMatchObject({ trigger: 'gap', status: 'succeeded' });
    expect(Date.parse(run.since)).toBe(started.getTime() - 60_000);
    expect(Date.parse(run.until)).toBe(ended.getTime() + 60_000);
  });
});

describe('reconciliation: a run whose process dies, and the passthrough beside a run', () => {
  let s: Setup;
  const workers: SpawnedApp[] = [];
  /** A worker process over the test app's database and queues, reconciling at 4 requests/s. */
  const worker = () =>
    startWorker(s.t, {
      workers,
      env: {
        ...s.zoom.env(),
        AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
        ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
        RECONCILE_INTERVAL_MS: '0',
        RECONCILE_MAX_RPS: '4',
      },
    });
  const total = (counts: Record<string, number>) =>
    Object.values(counts).reduce((sum, n) => sum + n, 0);

  // The test app serves the API only: the runs and the deliveries are the workers'.
  beforeAll(async () => {
    s = await setup({ APP_ROLE: 'api' });
    await worker();
  }, spawnTestMs());
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exit));
    await teardown(s);
  });

  it('answers passthrough calls while a run takes its whole request budget', async () => {
    const host = s.zoom.addUser({ email: 'host@example.com' });
    s.reports.addDay({ from: new Date(Date.now() - 20 * HOUR).toISOString(), meetings: 40 });
    const run = await startRun(s, { since: new Date(Date.now() - 21 * HOUR).toISOString() });
    const status = async () =>
      (await request(s.t.baseUrl, 'GET', `/api/reconciliations/${run.id}`, { token: s.admin }))
        .body as Json;
    await waitFor(async () => (await status()).status === 'running', {
      what: 'the run to start',
    });
    // Its own budget (docs/reconciliation.md): a passthrough call never waits on the run's.
    const listed = await request(s.t.baseUrl, 'GET', `/api/users/${host.id}/meetings`, {
      token: s.admin,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.meetings).toEqual(expect.any(Array));
    expect((await status()).status).toBe('running');
    expect(await finished(s, run.id, 120_000)).toMatchObject({ status: 'succeeded' });
  }, 180_000);

  it(
    'is taken over when its process dies: finished, each occurrence stored once',
    async () => {
      const day = s.reports.addDay({
        from: new Date(Date.now() - 10 * HOUR).toISOString(),
        meetings: 40,
      });
      const expected = day.flatMap((m) => s.reports.webhooks(m)).map(occurrenceOf);
      const reconciled = async () =>
        Number(
          (
            await queryDatabase<{ n: string }>(
              s.t.database.url,
              `SELECT count(*) AS n FROM inbound_events WHERE via = 'reconciliation'`,
            )
          )[0].n,
        );
      const before = await reconciled();
      const run = await startRun(s, { since: new Date(Date.now() - 11 * HOUR).toISOString() });
      // Killed once it has stored some of the day and written its progress.
      await waitFor(
        async () => {
          const seen = (
            await request(s.t.baseUrl, 'GET', `/api/reconciliations/${run.id}`, { token: s.admin })
          ).body as Json;
          if (seen.finished_at)
            throw new Error(`the run ended before its process died: ${seen.status}`);
          return seen.status === 'running' && total(seen.created) > 0;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: 'the run to create some events' },
      );
      workers[0].child.kill('SIGKILL');
      await workers[0].exit;
      await worker();

      const ended = await finished(s, run.id, 120_000);
      expect(ended.status).toBe('succeeded');
      // Every occurrence of the day stored once, by the one run over two processes.
      expect((await reconciled()) - before).toBe(expected.length);
      // Every delivery of the run succeeds: a failure names those pending and why (attempts,
      // due, lease), telling a late delivery from a lost one.
      const ids = await queryDatabase<{ id: string }>(
        s.t.database.url,
        `SELECT id FROM deliveries WHERE status <> 'succeeded'`,
      );
      await waitForDeliveriesSucceeded(
        s.t.database.url,
        ids.map((r) => r.id),
        { timeoutMs: 120_000 },
      );
      // Delivered at least once each (a delivery the dead process was sending may come twice,
      // under the same notification id), and never as two notifications.
      const missing = () => {
        const got = new Set(
          bodies(s, s.platformPath).map((b) => occurrence(b.event.slice(5), b.data)),
        );
        return expected.filter((o) => !got.has(o));
      };
      try {
        // An inbound job the dead process held stays Bull's until its lock lapses (30 s) and a
        // stall check (every 30 s) gives it back: up to a minute after the kill before it runs
        // again, and the sweeper leaves alone what Bull still holds.
        await waitFor(() => missing().length === 0, {
          timeoutMs: 120_000,
          what: 'every occurrence of the day delivered',
        });
      } catch (error) {
        // Tells a lost occurrence from one never published: the record's state beside it.
        const [state] = await queryDatabase<Record<string, string>>(
          s.t.database.url,
          `SELECT (SELECT count(*) FROM inbound_events WHERE processed_at IS NULL) AS unprocessed,
                  (SELECT count(*) FROM deliveries) AS deliveries,
                  (SELECT count(*) FROM deliveries WHERE status <> 'succeeded') AS not_succeeded`,
        );
        throw new Error(
          `${(error as Error).message}; missing ${missing().length} of ${expected.length} ` +
            `(${missing().slice(0, 5).join(', ')}); the record: ${JSON.stringify(state)}`,
        );
      }
      const idsOf = new Map<string, Set<string>>();
      for (const b of bodies(s, s.platformPath)) {
        const key = occurrence(b.event.slice(5), b.data);
        idsOf.set(key, (idsOf.get(key) ?? new Set()).add(b.id));
      }
      expect(expected.filter((o) => idsOf.get(o)?.size !== 1)).toEqual([]);
      // What the dead process created after its last progress write is found stored by the next.
      expect(total(ended.created)).toBeLessThanOrEqual(expected.length);
    },
    spawnTestMs() + 300_000,
  );
});
