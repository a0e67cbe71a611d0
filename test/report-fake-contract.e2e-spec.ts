import { loadConfig } from '../src/config/load-config';
import { PlatformOperation } from '../src/platform-api/platform-operations';
import type { ReconcileRedis } from '../src/inbound/sources/reconciliation/reconcile-redis';
import {
  PlatformReports,
  SOURCES,
  SourceName,
} from '../src/inbound/sources/reconciliation/platform-reports';
import { ZoomClient } from '../src/zoom/zoom.client';
import { ZoomHttp } from '../src/zoom/zoom-http';
import { ZoomTokenProvider } from '../src/zoom/zoom-token.provider';
import { FakeZoom } from './support/fake-zoom';
import { DayMeeting, FakeReports } from './support/fake-zoom-reports';
import { PlatformContract } from './support/platform-contract';
import table from './support/report-operations.json';

/**
 * The platform's report fake (test/support/fake-zoom-reports.ts), which every reconciliation
 * spec and bench runs against, held to its real twin: the dashboard operations of the
 * platform's published document (test/support/report-operations.json, extracted by
 * scripts/extract-platform-operations.ts). The same cases, read by the real report client
 * (PlatformReports), run against the fake and against a platform that answers from the document
 * alone (FakeZoom's contract mode): on both, each request the client makes is one the document
 * accepts and each answer is one the document allows, and the client finds its rows in either.
 */
const OPERATIONS = table.operations as unknown as PlatformOperation[];
const contract = new PlatformContract(OPERATIONS);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const DAY = '2026-03-02';

interface Platform {
  zoom: FakeZoom;
  /** The meeting and the webinar the cases ask about. */
  meeting: string;
  webinar: string;
}

/** FakeZoom with the report fake over a day of one meeting and one webinar. */
async function reportFake(): Promise<Platform> {
  const zoom = await FakeZoom.start();
  const reports = new FakeReports(zoom);
  const day: DayMeeting[] = reports.addDay({
    from: `${DAY}T09:00:00Z`,
    meetings: 1,
    webinars: 1,
    participantsEach: 2,
  });
  // One still running: the live listing has it.
  const [live] = reports.addDay({ from: iso(Date.now() - 60_000), meetings: 1 });
  live.end = null;
  return { zoom, meeting: day[0].meeting.uuid, webinar: day[1].meeting.uuid };
}

/** A platform answering each documented call from the document's own schemas. */
async function documented(): Promise<Platform> {
  const zoom = await FakeZoom.start({ contract: true, operations: OPERATIONS });
  return { zoom, meeting: 'aDYlohsHRtCd4ii1uC2+hA==', webinar: 'kV7Hc/TNQZeBmoLx1r2xvw==' };
}

/** The report client as a run makes it, over the platform's real REST client. */
function client(zoom: FakeZoom): PlatformReports {
  const config = loadConfig({ NODE_ENV: 'test', ...zoom.env() });
  const http = new ZoomHttp(config);
  const rest = new ZoomClient(config, new ZoomTokenProvider(config, http), http);
  // The shared request budget (Redis) is no part of this contract: every request may go.
  const budget = { take: () => Promise.resolve(0), pause: () => Promise.resolve() };
  return new PlatformReports(
    rest,
    budget as unknown as ReconcileRedis,
    1000,
    new AbortController().signal,
  );
}

const operationOf = (source: SourceName): PlatformOperation => {
  const { path } = SOURCES[source];
  const op = OPERATIONS.find((o) => o.path === path);
  if (!op) throw new Error(`${path} is not among the report operations`);
  return op;
};

describe.each([
  ['FakeReports', reportFake],
  ['the published document', documented],
] as const)('dashboard reports (%s)', (_name, open) => {
  let p: Platform;
  let reports: PlatformReports;
  beforeAll(async () => {
    p = await open();
    reports = client(p.zoom);
  });
  afterAll(() => p?.zoom.close());

  /** Every report request so far, as the document reads it. */
  const requestViolations = () =>
    p.zoom.requests
      .filter((r) => r.apiPath !== undefined)
      .flatMap((r) => {
        const check = contract.check(
          r.method,
          r.apiPath!,
          r.query,
          r.headers['content-type'],
          r.body,
        );
        return check.violations.map((v) => `${r.method} ${r.rawUrl}: ${v}`);
      });

  /**
   * The first page of a listing as a run reads it (the document's answer names the same next
   * page token every time, so only a first page is a case both can answer); it must be an
   * answer the document allows.
   */
  const firstPage = async (
    source: SourceName,
    list: string,
    query: Record<string, string>,
    params: Record<string, string> = {},
  ): Promise<Record<string, unknown>[]> => {
    const pages = reports.rows(source, list, query, params);
    const { value } = await pages.next();
    await pages.return(undefined);
    // The same request again, for the whole answer (rows() yields only the rows).
    const [asked] = p.zoom.requests.filter((r) => r.apiPath !== undefined).slice(-1);
    const body = await reports.get(source, params, asked.query.toString());
    expect(contract.answerViolations(operationOf(source).id, 200, body)).toEqual([]);
    return value as Record<string, unknown>[];
  };

  it.each([
    ['meetings', 'past'],
    ['meetings', 'live'],
    ['webinars', 'past'],
  ] as const)('lists %s (%s) as the document says', async (source, type) => {
    const rows = await firstPage(source, source, { type, from: DAY, to: DAY });
    expect(rows.length).toBeGreaterThan(0);
    // What a run reads of a listed meeting (docs/reconciliation.md).
    for (const row of rows) {
      expect(row).toEqual(
        expect.objectContaining({ uuid: expect.any(String), start_time: expect.any(String) }),
      );
    }
    expect(requestViolations()).toEqual([]);
  });

  it.each([
    ['meeting_participants', 'meeting', 'meetingId'],
    ['webinar_participants', 'webinar', 'webinarId'],
  ] as const)('lists the %s as the document says', async (source, which, param) => {
    const params = { [param]: p[which] };
    const rows = await firstPage(source, 'participants', { type: 'past' }, params);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toEqual(
        expect.objectContaining({ user_name: expect.any(String), join_time: expect.any(String) }),
      );
    }
    expect(requestViolations()).toEqual([]);
  });
});
