import { DataSource } from 'typeorm';
import { clientToken } from '../scripts/client-token';
import { FakeZoomOAuth } from './support/fake-zoom-oauth';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * Reconciliation per installed platform account (docs/reconciliation.md#accounts), against the
 * project's fake platform: each account's reports are read with its own token, what they
 * create is that account's (delivered to its client alone), and an account at its platform
 * limit holds back only its own run.
 */
const INSTALLERS = {
  east: {
    client_id: 'east',
    client_secret: 'east-secret-0123456789ab',
    scopes: 'accounts:write webhooks:read webhooks:write',
    accounts: [],
  },
  west: {
    client_id: 'west',
    client_secret: 'west-secret-0123456789ab',
    scopes: 'accounts:write webhooks:read webhooks:write',
    accounts: [],
  },
};
type Installer = keyof typeof INSTALLERS;
const ACCOUNT: Record<Installer, string> = { east: 'acct-east', west: 'acct-west' };
const REDIRECT_URL = 'http://bridge.test/zoom/oauth/callback';
const MINUTE = 60_000;

/** A past meeting as the dashboard report lists it, ended a few minutes ago. */
function reportedMeeting(id: string): Record<string, unknown> {
  return {
    id: Number(id),
    uuid: `uuid-${id}==`,
    topic: `meeting ${id}`,
    host_id: 'host',
    start_time: new Date(Date.now() - 30 * MINUTE).toISOString(),
    end_time: new Date(Date.now() - 5 * MINUTE).toISOString(),
    has_recording: false,
  };
}

describe('reconciliation per installed platform account', () => {
  let fake: FakeZoomOAuth;
  let t: TestApp;
  let receiver: Receiver;
  let admin: string;
  const hooks = {} as Record<Installer, string>;
  const tokens = {} as Record<Installer, string>;

  /** The platform meeting ids (event names) delivered to `who`'s webhook. */
  const delivered = (who: Installer): string[] =>
    receiver
      .requests(hooks[who])
      .map((r) => JSON.parse(r.body.toString('utf8')) as Json)
      .map((b) => `${b.data.object.id}:${b.event}`)
      .sort();

  const runsOf = async (accountId: string): Promise<Json[]> => {
    const res = await request(t.baseUrl, 'GET', '/api/reconciliations?limit=100', {
      token: admin,
    });
    expect(res.status).toBe(200);
    return (res.body.data as Json[]).filter((r) => r.account_id === accountId);
  };

  async function install(who: Installer): Promise<void> {
    const started = await request(t.baseUrl, 'POST', '/api/platform/installs', {
      token: tokens[who],
    });
    expect(started.status).toBe(201);
    const location = await fake.authorize(started.body.install_url, ACCOUNT[who]);
    const page = await fetch(location.replace(new URL(REDIRECT_URL).origin, t.baseUrl));
    expect(page.status).toBe(200);
  }

  beforeAll(async () => {
    fake = await new FakeZoomOAuth().start();
    receiver = await startReceiver();
    fake.reports.set(ACCOUNT.east, [reportedMeeting('1001')]);
    fake.reports.set(ACCOUNT.west, [reportedMeeting('2001')]);
    t = await startTestApp({
      env: {
        AUTH_CLIENTS: JSON.stringify([...Object.values(CLIENTS), ...Object.values(INSTALLERS)]),
        ZOOM_OAUTH_URL: fake.baseUrl,
        ZOOM_API_URL: `${fake.baseUrl}/v2`,
        ZOOM_APP_CLIENT_ID: fake.clientId,
        ZOOM_APP_CLIENT_SECRET: fake.clientSecret,
        ZOOM_APP_REDIRECT_URL: REDIRECT_URL,
        ZOOM_TIMEOUT_MS: '2000',
        // One scheduled run per account, as soon as it is installed; no server-to-server
        // credentials, so none for that account.
        RECONCILE_INTERVAL_MS: '3600000',
        RECONCILE_LOOKBACK_MS: String(2 * 60 * MINUTE),
        RECONCILE_SETTLE_MS: '0',
        RECONCILE_MAX_RPS: '50',
      },
    });
    admin = await t.token('admin');
    for (const who of ['east', 'west'] as const) {
      tokens[who] = await clientToken(t.baseUrl, INSTALLERS[who]);
      const route = receiver.route({}, `reconciled-${who}`);
      hooks[who] = route.path;
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token: tokens[who],
        body: { url: route.url, events: ['zoom.*'], secret: `whsec-reconciled-${who}-0123456789` },
      });
      expect(res.status).toBe(201);
    }
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await fake?.close();
  });

  it('runs each installed account on schedule with its own token; its events reach only its client', async () => {
    await install('east');
    await install('west');
    for (const who of ['east', 'west'] as const) {
      const [run] = await waitFor(
        async () => {
          const runs = await runsOf(ACCOUNT[who]);
          return runs.some((r) => r.finished_at) ? runs : undefined;
        },
        { what: `the scheduled run of ${ACCOUNT[who]} to end`, timeoutMs: 60_000 },
      );
      expect(run).toMatchObject({ trigger: 'schedule', status: 'succeeded' });
      expect(run.created).toEqual({ 'meeting.started': 1, 'meeting.ended': 1 });
    }
    await waitFor(() => delivered('east').length === 2 && delivered('west').length === 2, {
      what: 'each client to get its account’s two events',
    });
    expect(delivered('east')).toEqual(['1001:zoom.meeting.ended', '1001:zoom.meeting.started']);
    expect(delivered('west')).toEqual(['2001:zoom.meeting.ended', '2001:zoom.meeting.started']);
    const stored: { account_id: string; id: string }[] = await t.app.get(DataSource).query(
      `SELECT account_id, payload #>> '{payload,object,id}' AS id FROM inbound_events
         WHERE via = 'reconciliation' ORDER BY 2, account_id`,
    );
    expect(new Set(stored.map((r) => `${r.id}:${r.account_id}`))).toEqual(
      new Set(['1001:acct-east', '2001:acct-west']),
    );
    // Every report call carried a token of the account whose report it read.
    const reads = fake.calls.filter((c) => c.path.startsWith('/v2/metrics/'));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((c) => c.accountId === ACCOUNT.east || c.accountId === ACCOUNT.west)).toBe(
      true,
    );
  });

  it('refuses a run of an account the caller does not hold, or not installed', async () => {
    const since = new Date(Date.now() - 60 * MINUTE).toISOString();
    const missing = await request(t.baseUrl, 'POST', '/api/reconciliations', {
      token: admin,
      body: { since, account_id: 'acct-nowhere' },
    });
    expect(missing.status).toBe(409);
    expect(missing.body.message).toContain('not installed');
    const bad = await request(t.baseUrl, 'POST', '/api/reconciliations', {
      token: admin,
      body: { since, account_id: '../x' },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.details)).toContain('account_id');
  });

  it('one account at its platform limit holds back only its own run', async () => {
    fake.limited.set(ACCOUNT.east, 3600);
    fake.reports.get(ACCOUNT.east)?.push(reportedMeeting('1002'));
    fake.reports.get(ACCOUNT.west)?.push(reportedMeeting('2002'));
    const since = new Date(Date.now() - 60 * MINUTE).toISOString();
    const start = async (accountId: string): Promise<Json> => {
      const res = await request(t.baseUrl, 'POST', '/api/reconciliations', {
        token: admin,
        body: { since, account_id: accountId },
      });
      expect(res.status).toBe(202);
      expect(res.body.account_id).toBe(accountId);
      return res.body;
    };
    // East's first: a runner going one run at a time would keep west's behind it for an hour.
    const east = await start(ACCOUNT.east);
    const west = await start(ACCOUNT.west);
    const westEnded = await waitFor(
      async () => {
        const res = await request(t.baseUrl, 'GET', `/api/reconciliations/${west.id}`, {
          token: admin,
        });
        return res.body.finished_at ? res.body : undefined;
      },
      { what: "west's run to end while east waits out its limit", timeoutMs: 60_000 },
    );
    expect(westEnded).toMatchObject({ status: 'succeeded', created: { 'meeting.started': 1 } });
    await waitFor(() => delivered('west').includes('2002:zoom.meeting.started'), {
      what: "west's new meeting delivered",
    });
    const eastNow = await request(t.baseUrl, 'GET', `/api/reconciliations/${east.id}`, {
      token: admin,
    });
    expect(eastNow.body.status).toBe('running');
    expect(delivered('east')).not.toContain('1002:zoom.meeting.started');
    expect(delivered('east').every((e) => e.startsWith('100'))).toBe(true);
    const cancelled = await request(t.baseUrl, 'DELETE', `/api/reconciliations/${east.id}`, {
      token: admin,
    });
    expect(cancelled.status).toBe(200);
  });
});
