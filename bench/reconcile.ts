/**
 * Reconciliation of a day (docs/reconciliation.md): 2,000 meetings with 50,000 participants
 * that the service never received, reconciled at RECONCILE_MAX_RPS=20 by the app as deployed
 * (compiled, bench/sides.ts) in its own process: the time from the request to the last event delivered (goal: under 5 minutes)
 * and the service's peak RSS (goal: under 250 MB). Then another such day, every event of it
 * received by webhook first: its run must create nothing.
 *
 *   npx ts-node --transpile-only bench/reconcile.ts [meetings=2000] [participants=50000] [rps=20]
 *     [latency-ms=0]   (each report answer that late, as over the internet)
 *
 * The platform is the tests' fake (test/support/fake-zoom-reports.ts) in this process; the
 * receiver too, answering 200 at once.
 */
import { ZoomEvent } from '../scripts/platform/zoom-events';
import { FakeZoom } from '../test/support/fake-zoom';
import { DayMeeting, FakeReports } from '../test/support/fake-zoom-reports';
import { startReceiver } from '../test/support/receiver';
import { CLIENTS, ZOOM_SECRET_TOKEN, deleteRedisKeys } from '../test/support/test-app';
import { createTestDatabase } from '../test/support/test-db';
import { clientToken } from '../scripts/client-token';
import { recordTarget } from './results';
import { build, spawnDeployed } from './sides';
import { helpIfAsked, sampleRss, stopChild, subscribe, zoomHeaders } from './support';

helpIfAsked(__filename, '[meetings=2000] [participants=50000] [rps=20] [latency-ms=0]');

const MEETINGS = Math.max(1, Number(process.argv[2] ?? 2000));
const PARTICIPANTS = Math.max(0, Number(process.argv[3] ?? 50_000));
const RPS = Math.max(1, Number(process.argv[4] ?? 20));
/** How long each platform report answer takes (ms): 0 for the fake at once. */
const LATENCY_MS = Math.max(0, Number(process.argv[5] ?? 0));
const HOUR = 3_600_000;
const GOAL_MS = 5 * 60_000;
const GOAL_RSS_MB = 250;

async function poll<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const runSeconds = (run: Record<string, unknown>) =>
  ((Date.parse(run.finished_at as string) - Date.parse(run.started_at as string)) / 1000).toFixed(
    1,
  );

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = `mebbench:reconcile:${Date.now()}`;
  const zoom = await FakeZoom.start();
  const reports = new FakeReports(zoom);
  reports.latencyMs = LATENCY_MS;
  const receiver = await startReceiver();
  build();
  const { child, url } = await spawnDeployed(db.url, prefix, {
    LOG_LEVEL: 'warn',
    AUTH_CLIENTS: JSON.stringify([CLIENTS.alpha, CLIENTS.admin]),
    RECONCILE_INTERVAL_MS: '0',
    RECONCILE_MAX_RPS: String(RPS),
    ...zoom.env(),
  });
  try {
    const route = receiver.route({}, 'zoom');
    await subscribe(url, CLIENTS.alpha, {
      url: route.url,
      events: ['zoom.*'],
      secret: 'bench-secret-0123456789',
    });
    const admin = await clientToken(url, CLIENTS.admin);
    const each = Math.round(PARTICIPANTS / MEETINGS);
    const addDay = (hoursAgo: number): DayMeeting[] =>
      reports.addDay({
        from: new Date(Date.now() - hoursAgo * HOUR).toISOString(),
        meetings: MEETINGS,
        participantsEach: each,
        spacingMs: Math.floor((8 * HOUR) / MEETINGS),
        durationMs: 30 * 60_000,
      });
    const delivered = () => receiver.requests(route.path).length;
    const run = async (since: Date) => {
      const res = await fetch(`${url}/api/reconciliations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ since: since.toISOString() }),
      });
      const queued = (await res.json()) as { id: string };
      return poll(
        async () => {
          const r = await fetch(`${url}/api/reconciliations/${queued.id}`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          const body = (await r.json()) as { finished_at: string | null } & Record<string, unknown>;
          return body.finished_at ? body : undefined;
        },
        'the run to end',
        30 * 60_000,
      );
    };

    // 1. A day none of which was received.
    const missed = addDay(20);
    const expected = missed.reduce((n, m) => n + reports.webhooks(m).length, 0);
    const rss = sampleRss(child.pid, 200);
    const started = Date.now();
    const first = await run(new Date(Date.now() - 21 * HOUR));
    await poll(
      async () => (delivered() >= expected ? true : undefined),
      `${expected} deliveries`,
      30 * 60_000,
    );
    const elapsed = Date.now() - started;
    const peak = rss.stop();
    console.log(
      `missed day: ${MEETINGS} meetings, ${MEETINGS * each} participants, ${expected} events; ` +
        `run ${String(first.status)} in ${runSeconds(first)} s, created ${JSON.stringify(first.created)}; ` +
        `${zoom.apiRequests().length} platform requests at RECONCILE_MAX_RPS=${RPS}, ` +
        `answered after ${LATENCY_MS} ms; ` +
        `every event delivered ${(elapsed / 1000).toFixed(1)} s after the request ` +
        `(goal < ${GOAL_MS / 1000} s: ${elapsed < GOAL_MS ? 'met' : 'MISSED'}); ` +
        `service peak RSS ${peak.toFixed(0)} MB (goal < ${GOAL_RSS_MB}: ${peak < GOAL_RSS_MB ? 'met' : 'MISSED'})`,
    );

    recordTarget({
      target: `a day of ${MEETINGS} meetings and ${MEETINGS * each} participants reconciled at RECONCILE_MAX_RPS=${RPS}, none received: every event created and delivered in under 5 minutes, RSS under 250 MB`,
      figure: `${expected} events delivered ${(elapsed / 1000).toFixed(1)} s after the request; peak RSS ${peak.toFixed(0)} MB`,
      baseline: `${GOAL_MS / 1000} s, ${GOAL_RSS_MB} MB`,
      ratio: '-',
      met: elapsed < GOAL_MS && peak < GOAL_RSS_MB && first.status === 'succeeded',
    });

    // 2. Another day, every event of it received by webhook first.
    const received = addDay(10);
    const bodies: ZoomEvent[] = received.flatMap((m) => reports.webhooks(m));
    const before = delivered();
    for (let i = 0; i < bodies.length; i += 50) {
      await Promise.all(
        bodies.slice(i, i + 50).map(async (event) => {
          const text = JSON.stringify(event);
          const res = await fetch(`${url}/zoom/events`, {
            method: 'POST',
            headers: zoomHeaders(text, ZOOM_SECRET_TOKEN),
            body: text,
          });
          if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
        }),
      );
    }
    await poll(
      async () => (delivered() >= before + bodies.length ? true : undefined),
      'the received day delivered',
      30 * 60_000,
    );
    const second = await run(new Date(Date.now() - 11 * HOUR));
    const created = second.created as Record<string, number>;
    console.log(
      `received day: ${bodies.length} events by webhook; run ${String(second.status)}, created ` +
        `${JSON.stringify(created)} (goal: nothing: ${Object.keys(created).length === 0 ? 'met' : 'MISSED'})`,
    );
    recordTarget({
      target:
        'the same kind of day with every event received by webhook first: the run creates nothing',
      figure: `${bodies.length} events received; run ${String(second.status)}, created ${JSON.stringify(created)}`,
      baseline: 'nothing created',
      ratio: '-',
      met: Object.keys(created).length === 0 && second.status === 'succeeded',
    });
  } finally {
    await stopChild(child);
    await receiver.close();
    await zoom.close();
    await db.drop();
    await deleteRedisKeys(prefix);
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
