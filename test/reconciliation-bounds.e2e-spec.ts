import fc from 'fast-check';
import { FakeZoom } from './support/fake-zoom';
import {
  DayMeeting,
  FakeReports,
  endlessPages,
  pagedRows,
  repeatingTokens,
} from './support/fake-zoom-reports';
import { fuzzSettings } from './support/fuzz-settings';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { RunsApi, finishedRun, runNow, startRun } from './support/reconciliation-runs';
import { queryDatabase } from './support/test-db';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * Reports the bridge cannot trust (docs/reconciliation.md#reports-it-cannot-trust): a source
 * that answers 404, tokens that repeat, listings without end, uuids that are not path segments,
 * rows that name no one, reports far bigger than memory; and the bounds of a run itself: the
 * same failure twice, RECONCILE_RUN_TIMEOUT_MS, cancelling, gaps close together, no credentials.
 * Every run here must end: a run that loops for ever fails its test by its deadline.
 */

const HOUR = 3_600_000;
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface Platform {
  zoom: FakeZoom;
  reports: FakeReports;
  t: TestApp;
  api: RunsApi;
}

async function platform(env: Record<string, string> = {}): Promise<Platform> {
  const zoom = await FakeZoom.start();
  const reports = new FakeReports(zoom);
  const t = await startTestApp({
    env: { ...zoom.env(), RECONCILE_MAX_RPS: '100', RECONCILE_GAP_DELAY_MS: '1000', ...env },
  });
  return { zoom, reports, t, api: { baseUrl: t.baseUrl, admin: await t.token('admin') } };
}

async function close(p: Platform | undefined): Promise<void> {
  await p?.t.close();
  await p?.zoom.close();
}

/**
 * One meeting `hoursAgo` hours back with no participants of its own (a test scripts them), and
 * the run's window around it: each test its own hour, so that tests do not see each other's.
 */
function meetingAt(p: Platform, hoursAgo: number): { m: DayMeeting; since: string; until: string } {
  const start = Date.now() - hoursAgo * HOUR;
  const [m] = p.reports.addDay({ from: iso(start), meetings: 1, participantsEach: 0 });
  return { m, since: iso(start - 10 * MINUTE), until: iso(start + 40 * MINUTE) };
}

/** A participant report row of someone who joined `at` (ms) and stayed ten minutes. */
const guest = (at: number, fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  join_time: iso(at).replace('.000Z', 'Z'),
  leave_time: iso(at + 10 * MINUTE).replace('.000Z', 'Z'),
  ...fields,
});

/** A run of `body`, started and waited for. */
async function runToEnd(p: Platform, body: Record<string, unknown>, timeoutMs?: number) {
  return finishedRun(p.api, (await startRun(p.api, body)).id, timeoutMs);
}

/** The run ended `partial` with this one error. */
function expectPartial(ended: Json, error: Record<string, unknown>): void {
  expect({ status: ended.status, errors: ended.errors }).toEqual({
    status: 'partial',
    errors: [expect.objectContaining(error)],
  });
}

describe('reconciliation: reports it cannot trust', () => {
  let p: Platform;

  beforeAll(async () => {
    p = await platform();
  }, 120_000);
  afterAll(() => close(p));

  it('records a source that answers 404 like a 403: partial, the others reconciled, asked once', async () => {
    const start = Date.now() - 25 * HOUR;
    p.reports.addDay({ from: iso(start), meetings: 1, webinars: 1, participantsEach: 1 });
    p.reports.refuse('meetings', 404, 'Not found');
    try {
      const ended = await runToEnd(p, { since: iso(start - MINUTE), until: iso(start + HOUR) });
      expect(ended.status).toBe('partial');
      expect(ended.errors).toEqual([{ source: 'meetings', status: 404, message: 'Not found' }]);
      expect(ended.created).toMatchObject({
        'webinar.started': 1,
        'webinar.participant_joined': 1,
      });
      // The past and the live listing, once each: never asked again and again.
      expect(p.reports.hits.filter((h) => h.source === 'meetings').length).toBeLessThanOrEqual(2);
    } finally {
      p.reports.allow('meetings');
    }
  });

  it("records a meeting's participant report that answers 404, and reads the next meeting's", async () => {
    const start = Date.now() - 24 * HOUR;
    p.reports.addDay({ from: iso(start), meetings: 1, participantsEach: 1 });
    // A meeting the fake has no report of: its participant report answers 404 (3001).
    p.reports.addDashboardRow('meeting', {
      uuid: 'no-report-of-this-one==',
      id: 81234567891,
      start_time: iso(start + MINUTE).replace('.000Z', 'Z'),
      end_time: iso(start + 20 * MINUTE).replace('.000Z', 'Z'),
    });
    const ended = await runToEnd(p, { since: iso(start - MINUTE), until: iso(start + HOUR) });
    expectPartial(ended, { source: 'meeting_participants', status: 404 });
    expect(ended.created).toMatchObject({
      'meeting.started': 2,
      'meeting.participant_joined': 1,
    });
  });

  it('ends a listing whose next_page_token repeats, with an error, and reconciles the rest', async () => {
    const { m, since, until } = meetingAt(p, 23);
    const at = Date.parse(m.start) + MINUTE;
    p.reports.scriptParticipants(
      m.meeting.uuid,
      repeatingTokens([guest(at, { user_id: 'u-1', user_name: 'One' })], 3),
    );
    const ended = await runToEnd(p, { since, until });
    expectPartial(ended, {
      source: 'meeting_participants',
      status: null,
      message: expect.stringContaining('next_page_token repeated'),
    });
    // Every page before the repeat was read, and the first repeat ended it.
    expect(p.reports.pagesServed(`participants:${m.meeting.uuid}`)).toBe(4);
    expect(ended.created).toMatchObject({
      'meeting.started': 1,
      'meeting.participant_joined': 1,
    });
  });

  it('ends a listing after 1,000 pages with an error', async () => {
    const { m, since, until } = meetingAt(p, 22);
    const at = Date.parse(m.start) + MINUTE;
    p.reports.scriptParticipants(
      m.meeting.uuid,
      endlessPages((i) => [guest(at + i * 1000, { user_id: `u-${i}` })]),
    );
    const ended = await runToEnd(p, { since, until, dry_run: true }, 120_000);
    expectPartial(ended, {
      source: 'meeting_participants',
      message: expect.stringContaining('more than 1000 pages'),
    });
    expect(p.reports.pagesServed(`participants:${m.meeting.uuid}`)).toBe(1000);
    expect(ended.checked.participants).toBe(1000);
  }, 180_000);

  it('never puts a uuid "." or ".." in a path: recorded, nothing asked of another endpoint', async () => {
    const start = Date.now() - 21 * HOUR;
    const before = p.zoom.requests.length;
    for (const uuid of ['.', '..']) {
      p.reports.addDashboardRow('meeting', {
        uuid,
        id: 81234567890,
        topic: `uuid ${uuid}`,
        start_time: iso(start).replace('.000Z', 'Z'),
        end_time: iso(start + 30 * MINUTE).replace('.000Z', 'Z'),
        duration: '00:30:00',
        has_recording: true,
      });
    }
    const ended = await runToEnd(p, { since: iso(start - MINUTE), until: iso(start + HOUR) });
    expect(ended.status).toBe('partial');
    expect(ended.errors).toEqual(
      expect.arrayContaining([
        {
          source: 'meeting_participants',
          status: null,
          message: 'uuid "." cannot be put in a path',
        },
        {
          source: 'meeting_participants',
          status: null,
          message: 'uuid ".." cannot be put in a path',
        },
        { source: 'recordings', status: null, message: 'uuid "." cannot be put in a path' },
        { source: 'recordings', status: null, message: 'uuid ".." cannot be put in a path' },
      ]),
    );
    const dotted = p.zoom.requests
      .slice(before)
      .filter((r) => r.rawPath.split('/').some((s) => /^(\.|%2e){1,2}$/i.test(s)));
    expect(dotted.map((r) => r.rawUrl)).toEqual([]);
  });

  it('keeps apart report rows that name no one, and a rerun creates nothing', async () => {
    const { m, since, until } = meetingAt(p, 20);
    const at = Date.parse(m.start) + MINUTE;
    p.reports.scriptParticipants(
      m.meeting.uuid,
      pagedRows(
        5,
        (i) =>
          [
            // Two guests by name only, then two alike in every field (dialled in from one place).
            guest(at, { user_name: 'Guest A', device: 'Phone' }),
            guest(at, { user_name: 'Guest B', device: 'Phone' }),
            guest(at, { device: 'Phone', location: 'Berlin (DE)' }),
            guest(at, { device: 'Phone', location: 'Berlin (DE)' }),
            guest(at, { device: 'Windows', ip_address: '192.0.2.7' }),
          ][i],
      ),
    );
    const first = await runToEnd(p, { since, until });
    expect(first.status).toBe('succeeded');
    expect(first.created).toMatchObject({
      'meeting.participant_joined': 5,
      'meeting.participant_left': 5,
    });
    const again = await runToEnd(p, { since, until });
    expect(again).toMatchObject({ status: 'succeeded', created: {}, missing: {} });
  });

  it('reads a report of 100,000 participants page by page', async () => {
    const { m, since, until } = meetingAt(p, 19);
    const at = Date.parse(m.start) + MINUTE;
    p.reports.scriptParticipants(
      m.meeting.uuid,
      pagedRows(100_000, (i) => guest(at + (i % 1000) * 1000, { user_id: `u-${i}` })),
    );
    const ended = await runToEnd(p, { since, until, dry_run: true }, 240_000);
    expect(ended).toMatchObject({
      status: 'succeeded',
      checked: { participants: 100_000 },
      missing: {
        'meeting.started': 1,
        'meeting.participant_joined': 100_000,
        'meeting.participant_left': 100_000,
      },
    });
  }, 300_000);

  it('reads a recording of 200,000 files', async () => {
    const { m, since, until } = meetingAt(p, 18);
    m.recording = true;
    p.reports.scriptRecording(m.meeting.uuid, () => {
      const end = iso(Date.parse(m.start) + 20 * MINUTE);
      const files: Record<string, unknown>[] = [];
      for (let i = 0; i < 200_000; i++) files.push({ id: `f${i}`, recording_end: end });
      return {
        uuid: m.meeting.uuid,
        id: m.meeting.id,
        start_time: m.start,
        recording_files: files,
      };
    });
    const ended = await runToEnd(p, { since, until, dry_run: true }, 120_000);
    expect(ended).toMatchObject({
      status: 'succeeded',
      checked: { recordings: 1 },
      missing: { 'recording.completed': 1 },
    });
  }, 180_000);

  it('creates 40,000 joins of one meeting, every one stored, the API answering meanwhile', async () => {
    const { m, since, until } = meetingAt(p, 17);
    const at = Date.parse(m.start) + MINUTE;
    p.reports.scriptParticipants(
      m.meeting.uuid,
      pagedRows(40_000, (i) => ({ user_id: `j-${i}`, join_time: iso(at + (i % 600) * 1000) })),
    );
    const run = await startRun(p.api, { since, until });
    const answered = await waitFor(
      async () => {
        const now = await runNow(p.api, run.id);
        return now.status === 'running' && (now.created['meeting.participant_joined'] ?? 0) > 0
          ? now
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, what: 'the run to be creating' },
    );
    expect(answered.status).toBe('running');
    const ended = await finishedRun(p.api, run.id, 400_000);
    expect(ended).toMatchObject({
      status: 'succeeded',
      created: { 'meeting.started': 1, 'meeting.participant_joined': 40_000 },
    });
    const [stored] = await queryDatabase<{ n: string }>(
      p.t.database.url,
      `SELECT count(*) AS n FROM inbound_events
       WHERE via = 'reconciliation' AND event = 'meeting.participant_joined'
         AND payload #>> '{payload,object,uuid}' = $1`,
      [m.meeting.uuid],
    );
    expect(Number(stored.n)).toBe(40_000);
  }, 600_000);

  it('ends failed a run that fails the same way twice, never resumed for ever', async () => {
    const { since, until } = meetingAt(p, 16);
    // PostgreSQL refuses what the run stores: the same error at every attempt.
    await queryDatabase(
      p.t.database.url,
      `CREATE FUNCTION refuse_reconciled() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.via = 'reconciliation' THEN RAISE EXCEPTION 'refused by the test'; END IF;
         RETURN NEW;
       END $$`,
    );
    await queryDatabase(
      p.t.database.url,
      `CREATE TRIGGER refuse_reconciled BEFORE INSERT ON inbound_events
       FOR EACH ROW EXECUTE FUNCTION refuse_reconciled()`,
    );
    try {
      const ended = await runToEnd(p, { since, until }, 60_000);
      expect(ended.status).toBe('failed');
      const interruptions = (ended.errors as Json[]).filter((e) => e.source === 'run');
      expect(interruptions).toEqual([
        { source: 'run', status: null, message: expect.stringMatching(/^interrupted: /) },
      ]);
    } finally {
      await queryDatabase(p.t.database.url, `DROP TRIGGER refuse_reconciled ON inbound_events`);
      await queryDatabase(p.t.database.url, `DROP FUNCTION refuse_reconciled()`);
    }
  });

  // Random pages: rows of any shape and depth, huge strings, tokens that repeat or never end.
  // Whatever they hold, the run ends and the process's heap stays within a bound.
  it('ends every run in bounded memory whatever the report holds (property)', async () => {
    // Ten cases (each a whole run) from seed 36, whatever FUZZ_RUNS asks: see fuzzSettings.
    const { runs, seed, path } = fuzzSettings(10, 36, 10);
    // As JSON text: JSON.stringify cannot walk a value this deep (the fake sends it as text).
    const deep = (depth: number) => `${'[{"v":'.repeat(depth)}"bottom"${'}]'.repeat(depth)}`;
    const field = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc.integer({ min: 1000, max: 20_000 }).map(deep),
      fc.integer({ min: 10_000, max: 500_000 }).map((n) => JSON.stringify('x'.repeat(n))),
      fc.constantFrom('"2026-01-01T00:00:00Z"', '"u-1"', 'null', '12345678901234567890'),
    );
    const row = fc
      .dictionary(
        fc.constantFrom('user_id', 'user_name', 'id', 'email', 'join_time', 'leave_time', 'device'),
        field,
        { maxKeys: 5 },
      )
      .map(
        (r) =>
          `{${Object.entries(r)
            .map(([k, v]) => `"${k}":${v}`)
            .join(',')}}`,
      );
    const pageOf = fc.array(row, { maxLength: 10 }).map((rows) => `[${rows.join(',')}]`);
    let hour = 40;
    let heapMost = 0;
    const heapBefore = process.memoryUsage().heapUsed;
    await fc.assert(
      fc.asyncProperty(
        fc.array(pageOf, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('fresh', 'repeat', 'endless'),
        async (pages, tokens) => {
          const { m, since, until } = meetingAt(p, hour++);
          const next = (i: number) =>
            tokens === 'repeat'
              ? `again-${i % 2}`
              : tokens === 'endless' || i + 1 < pages.length
                ? `p${i + 1}`
                : '';
          // Past its pages, an endless listing sends empty ones (the 1,000 pages are what counts).
          p.reports.scriptParticipants(m.meeting.uuid, {
            page: (_token, i) => ({
              rows: [],
              next: next(i),
              json: tokens === 'endless' && i >= pages.length ? '[]' : pages[i % pages.length],
            }),
          });
          const sampler = setInterval(() => {
            heapMost = Math.max(heapMost, process.memoryUsage().heapUsed);
          }, 20);
          try {
            const ended = await runToEnd(p, { since, until, dry_run: true }, 120_000);
            expect(['succeeded', 'partial']).toContain(ended.status);
          } finally {
            clearInterval(sampler);
          }
        },
      ),
      { numRuns: runs, seed, path },
    );
    // The test process holds the app, the fake and the pages: a bound far below what reading
    // an endless report whole, or a page's deep values stringified, would take.
    expect(heapMost - heapBefore).toBeLessThan(300 * 1024 * 1024);
  }, 600_000);
});

describe('reconciliation: a run’s own bounds, cancelling, gaps', () => {
  let p: Platform;
  let receiver: Receiver;
  let completedPath: string;
  const RUN_TIMEOUT_MS = 6000;

  beforeAll(async () => {
    p = await platform({ RECONCILE_RUN_TIMEOUT_MS: String(RUN_TIMEOUT_MS) });
    receiver = await startReceiver();
    const route = receiver.route({}, 'completed');
    completedPath = route.path;
    const res = await request(p.t.baseUrl, 'POST', '/api/webhooks', {
      token: p.api.admin,
      body: {
        url: route.url,
        events: ['bridge.reconciliation.completed'],
        secret: 'subscriber-secret-0123456789',
      },
    });
    expect(res.status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await close(p);
    await receiver?.close();
  });

  const completions = (): Json[] =>
    receiver.requests(completedPath).map((r) => JSON.parse(r.body.toString('utf8')).data);

  it('ends failed a run past RECONCILE_RUN_TIMEOUT_MS, and the manual run behind it runs', async () => {
    const { since, until } = meetingAt(p, 30);
    // Each answer takes twice the run's limit: the run cannot end by itself in time.
    p.reports.latencyMs = 2 * RUN_TIMEOUT_MS;
    let stuck: Json;
    const hitsBefore = p.reports.hits.length;
    try {
      stuck = await startRun(p.api, { since, until });
      // Until its first report call has reached the platform: a run marked running whose first
      // call comes after the latency is dropped (a loaded machine) would end by itself in time.
      await waitFor(
        async () =>
          (await runNow(p.api, stuck.id)).status === 'running' &&
          p.reports.hits.length > hitsBefore,
        { what: "the slow run's first report call" },
      );
    } finally {
      p.reports.latencyMs = 0;
    }
    const behind = await startRun(p.api, { since, until, dry_run: true });
    const ended = await finishedRun(p.api, stuck.id, 60_000);
    expect(ended.status).toBe('failed');
    expect(ended.errors).toContainEqual({
      source: 'run',
      status: null,
      message: `it ran longer than RECONCILE_RUN_TIMEOUT_MS (${RUN_TIMEOUT_MS} ms)`,
    });
    expect((await finishedRun(p.api, behind.id, 60_000)).status).toBe('succeeded');
  }, 120_000);

  it('cancels a queued or running run: failed, saying so, announced; 409 once ended, 404 unknown', async () => {
    const { since, until } = meetingAt(p, 31);
    p.reports.latencyMs = 1500;
    try {
      const running = await startRun(p.api, { since, until });
      const queued = await startRun(p.api, { since, until });
      await waitFor(async () => (await runNow(p.api, running.id)).status === 'running', {
        what: 'the first run to start',
      });
      for (const run of [queued, running]) {
        const res = await request(p.t.baseUrl, 'DELETE', `/api/reconciliations/${run.id}`, {
          token: p.api.admin,
        });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: run.id, status: 'failed' });
        expect(res.body.errors).toContainEqual({
          source: 'run',
          status: null,
          message: 'cancelled (DELETE /api/reconciliations/{id})',
        });
        expect(res.body.finished_at).toEqual(expect.any(String));
      }
      const again = await request(p.t.baseUrl, 'DELETE', `/api/reconciliations/${queued.id}`, {
        token: p.api.admin,
      });
      expect(again.status).toBe(409);
      expect(again.body.message).toBe('Reconciliation run has ended already (failed)');
      const unknown = await request(
        p.t.baseUrl,
        'DELETE',
        '/api/reconciliations/0190a000-0000-7000-8000-000000000000',
        { token: p.api.admin },
      );
      expect(unknown.status).toBe(404);
      // Each announced once, as failed, whether it had started or not.
      await waitFor(
        () =>
          [running.id, queued.id].every((id) =>
            completions().some((c) => c.id === id && c.status === 'failed'),
          ),
        { timeoutMs: 30_000, what: 'both cancellations announced' },
      );
      // The running one stopped: it stays as cancelled, and asks the platform no more.
      const hits = p.reports.hits.length;
      const next = await startRun(p.api, { since, until, dry_run: true });
      await finishedRun(p.api, next.id, 60_000);
      expect((await runNow(p.api, running.id)).status).toBe('failed');
      expect(completions().filter((c) => c.id === running.id)).toHaveLength(1);
      expect(p.reports.hits.length).toBeGreaterThan(hits);
    } finally {
      p.reports.latencyMs = 0;
    }
  }, 120_000);

  it('reconciles gaps within a minute of each other as one window', async () => {
    const end = Date.now() - 2000;
    const gaps = [
      [end - 5 * MINUTE, end - 4 * MINUTE],
      [end - 4 * MINUTE + 30_000, end - 3 * MINUTE],
      [end - 3 * MINUTE + 10_000, end],
    ];
    const rows: { id: string }[] = [];
    for (const [from, to] of gaps) {
      const [row] = await queryDatabase<{ id: string }>(
        p.t.database.url,
        `INSERT INTO inbound_gaps (started_at, ended_at) VALUES ($1, $2) RETURNING id`,
        [new Date(from), new Date(to)],
      );
      rows.push(row);
    }
    const marked = await waitFor(
      async () => {
        const found = await queryDatabase<{ reconciliation_id: string | null }>(
          p.t.database.url,
          `SELECT reconciliation_id FROM inbound_gaps WHERE id = ANY($1::uuid[])`,
          [rows.map((r) => r.id)],
        );
        return found.every((r) => r.reconciliation_id !== null) ? found : undefined;
      },
      { timeoutMs: 30_000, what: 'the gaps to get their run' },
    );
    expect(new Set(marked.map((r) => r.reconciliation_id)).size).toBe(1);
    const run = await finishedRun(p.api, marked[0].reconciliation_id as string);
    expect(run).toMatchObject({ trigger: 'gap', status: 'succeeded' });
    expect(Date.parse(run.since)).toBe(gaps[0][0] - MINUTE);
    expect(Date.parse(run.until)).toBe(end + MINUTE);
  });
});

describe('reconciliation without the platform’s credentials', () => {
  let t: TestApp;
  let api: RunsApi;

  beforeAll(async () => {
    t = await startTestApp({ env: { RECONCILE_INTERVAL_MS: '1000', RECONCILE_GAP_DELAY_MS: '0' } });
    api = { baseUrl: t.baseUrl, admin: await t.token('admin') };
  }, 120_000);
  afterAll(() => t?.close());

  it('starts no scheduled run; a manual one ends failed naming the missing variables', async () => {
    await queryDatabase(
      t.database.url,
      `INSERT INTO inbound_gaps (started_at, ended_at) VALUES (now() - interval '5 min', now() - interval '4 min')`,
    );
    const run = await startRun(api, { since: iso(Date.now() - HOUR) });
    // The runner has ticked past its plan by the time the manual run ends.
    const ended = await finishedRun(api, run.id);
    expect(ended.status).toBe('failed');
    expect(ended.errors).toEqual([
      {
        source: 'meetings',
        status: null,
        message:
          'The meeting platform is not configured: set ZOOM_ACCOUNT_ID, ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET',
      },
    ]);
    const list = (await request(t.baseUrl, 'GET', '/api/reconciliations', { token: api.admin }))
      .body.data as Json[];
    expect(list.map((r) => r.trigger)).toEqual(['manual']);
  });
});
