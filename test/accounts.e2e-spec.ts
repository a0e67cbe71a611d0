import { DataSource } from 'typeorm';
import { clientToken } from '../scripts/client-token';
import { AccountsService } from '../src/accounts/accounts.service';
import { DeauthorizationWatcher } from '../src/accounts/deauthorization.watcher';
import { stateHash } from '../src/accounts/install-flow.service';
import { EXIT } from '../src/cli/exit-codes';
import { withCli } from './support/cli';
import { INLINE_FANOUT_MAX } from '../src/inbound/inbound-event.store';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { FakeZoomOAuth } from './support/fake-zoom-oauth';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, SpawnedWorker, spawnTestMs, startWorker } from './support/spawn-app';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';

/**
 * Many platform accounts (docs/accounts.md) against a fake platform that rotates refresh
 * tokens as the real one does: installs, tokens renewed once across processes, a renewal
 * killed midway, tenancy of events by account, and accounts leaving.
 */
const SCOPES = 'accounts:write webhooks:read webhooks:write users:read meetings:read';
const INSTALLERS = {
  north: {
    client_id: 'north',
    client_secret: 'north-secret-0123456789',
    scopes: SCOPES,
    accounts: [],
  },
  south: {
    client_id: 'south',
    client_secret: 'south-secret-0123456789',
    scopes: SCOPES,
    accounts: [],
  },
  listed: {
    client_id: 'listed',
    client_secret: 'listed-secret-012345678',
    scopes: 'webhooks:read webhooks:write users:read',
    accounts: ['acct-south'],
  },
};
type Installer = keyof typeof INSTALLERS;
const REDIRECT_URL = 'http://bridge.test/zoom/oauth/callback';

function meetingEvent(
  accountId: string | undefined,
  id: string,
  event = 'meeting.started',
): object {
  return {
    event,
    event_ts: Date.now(),
    payload: {
      ...(accountId === undefined ? {} : { account_id: accountId }),
      object: {
        id,
        uuid: `uuid-${id}==`,
        topic: `m ${id}`,
        host_id: 'h',
        start_time: new Date().toISOString(),
      },
    },
  };
}

describe('many platform accounts', () => {
  let fake: FakeZoomOAuth;
  let t: TestApp;
  let receiver: Receiver;
  let env: Record<string, string>;
  const spawned: SpawnedApp[] = [];
  const tokens = new Map<string, string>();
  /** The webhook of north's that subscribes to the bridge.account.* events. */
  let northOpsPath = '';

  const tokenOf = async (who: Installer | 'alpha'): Promise<string> => {
    let found = tokens.get(who);
    if (!found) {
      found = await clientToken(t.baseUrl, who === 'alpha' ? CLIENTS.alpha : INSTALLERS[who]);
      tokens.set(who, found);
    }
    return found;
  };
  /** The platform's redirect, sent to the app's own port. */
  const callbackOf = (location: string): string =>
    location.replace(new URL(REDIRECT_URL).origin, t.baseUrl);
  const api = async (who: Installer | 'alpha', method: string, path: string, options = {}) =>
    request(t.baseUrl, method, path, { token: await tokenOf(who), ...options });

  async function install(who: Installer, accountId: string): Promise<void> {
    const started = await api(who, 'POST', '/api/platform/installs');
    expect(started.status).toBe(201);
    const callback = callbackOf(await fake.authorize(started.body.install_url, accountId));
    const page = await fetch(callback);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(accountId);
    expect(t.logs.join('\n')).not.toContain(new URL(callback).searchParams.get('code'));
  }

  /** The rows stored of `accountId`'s installation (none after a refused callback). */
  const installationsOf = (accountId: string): Promise<unknown[]> =>
    t.app.get(DataSource).query(`SELECT 1 FROM installations WHERE account_id = $1`, [accountId]);

  /** The installation events `route` received, as bodies. */
  const bodiesAt = (path: string) =>
    receiver.received
      .filter((r) => r.path === path)
      .map(
        (r) => JSON.parse(r.body.toString()) as { event: string; data: Record<string, unknown> },
      );

  /** Time passes until the account's token is due: its renew point is behind us. */
  async function makeDue(accountId: string): Promise<void> {
    await t.app
      .get(DataSource)
      .query(
        `UPDATE installations SET access_renew_at = now() - interval '1 s' WHERE account_id = $1`,
        [accountId],
      );
  }

  beforeAll(async () => {
    fake = await new FakeZoomOAuth().start();
    receiver = await startReceiver();
    env = {
      AUTH_CLIENTS: JSON.stringify([...Object.values(CLIENTS), ...Object.values(INSTALLERS)]),
      ZOOM_OAUTH_URL: fake.baseUrl,
      ZOOM_API_URL: `${fake.baseUrl}/v2`,
      ZOOM_APP_CLIENT_ID: fake.clientId,
      ZOOM_APP_CLIENT_SECRET: fake.clientSecret,
      // As the platform reaches it; the tests' browser goes to the app's own port (callbackOf).
      ZOOM_APP_REDIRECT_URL: REDIRECT_URL,
      ZOOM_TIMEOUT_MS: '2000',
      RETENTION_INTERVAL_MS: '1000',
    };
    t = await startTestApp({ env });
  });

  afterAll(async () => {
    for (const app of spawned) app.child.kill('SIGKILL');
    await t?.close();
    await receiver?.close();
    await fake?.close();
  });

  it('installs an account: page, listing without tokens, tokens encrypted at rest', async () => {
    await install('north', 'acct-north');
    const listed = await api('north', 'GET', '/api/platform/accounts');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      {
        account_id: 'acct-north',
        status: 'active',
        installed_by: 'north',
        installed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        scopes: expect.any(String),
      },
    ]);
    expect(listed.text).not.toContain('refresh');
    // The operator (bridge:admin) sees every installation; a client with neither scope none.
    expect((await api('alpha', 'GET', '/api/platform/accounts')).status).toBe(403);
    const admin = await request(t.baseUrl, 'GET', '/api/platform/accounts', {
      token: await t.token('admin'),
    });
    expect(admin.body.data.map((a: { account_id: string }) => a.account_id)).toContain(
      'acct-north',
    );
    const [row] = await t.app
      .get(DataSource)
      .query(`SELECT refresh_token_encrypted FROM installations WHERE account_id = 'acct-north'`);
    expect(row.refresh_token_encrypted).not.toContain(fake.currentRefreshToken('acct-north'));
    expect(t.logs.join('\n')).not.toContain(fake.currentRefreshToken('acct-north'));
  });

  it('gives an install URL with PKCE S256 whose state works once, for 10 minutes', async () => {
    const before = Date.now();
    const started = await api('south', 'POST', '/api/platform/installs');
    const after = Date.now();
    expect(started.status).toBe(201);
    const url = new URL(started.body.install_url);
    expect(`${url.origin}${url.pathname}`).toBe(`${fake.baseUrl}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: fake.clientId,
      redirect_uri: REDIRECT_URL,
      state: expect.any(String),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    const expiresAt = Date.parse(started.body.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 10 * 60_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 10 * 60_000);
    // Ten minutes pass.
    await t.app
      .get(DataSource)
      .query(
        `UPDATE install_states SET expires_at = now() - interval '1 s' WHERE state_hash = $1`,
        [stateHash(url.searchParams.get('state') as string)],
      );
    const late = await fetch(callbackOf(await fake.authorize(url.href, 'acct-late')));
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('expired');
    expect(await installationsOf('acct-late')).toHaveLength(0);
  });

  it('answers every bad callback with a 400 page naming the problem, storing nothing', async () => {
    const started = await api('south', 'POST', '/api/platform/installs');
    const callback = callbackOf(await fake.authorize(started.body.install_url, 'acct-bad'));
    const state = new URL(callback).searchParams.get('state') as string;
    const cb = (query: string) => fetch(`${t.baseUrl}/zoom/oauth/callback?${query}`);
    const stateless = await cb('code=x');
    expect(stateless.status).toBe(400);
    expect(await stateless.text()).toContain('no state');
    const unknown = await cb('state=nope&code=x');
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('unknown');
    const badCode = await cb(`state=${state}&code=forged`);
    expect(badCode.status).toBe(400);
    expect(await badCode.text()).toContain('refused the authorization code');
    const reused = await fetch(callback);
    expect(reused.status).toBe(400);
    expect(await reused.text()).toContain('already used');
    const denied = await fetch(
      callbackOf(
        await fake.authorize(
          (await api('south', 'POST', '/api/platform/installs')).body.install_url as string,
          'acct-bad',
          true,
        ),
      ),
    );
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain('access_denied');
    expect(await installationsOf('acct-bad')).toHaveLength(0);
  });

  it('passes through with the account token for a holder only (403 otherwise, 409 not installed)', async () => {
    const call = (who: Installer | 'alpha', account: string) =>
      api(who, 'GET', '/api/users', { headers: { 'x-platform-account': account } });
    const ok = await call('north', 'acct-north');
    expect(ok.status).toBe(200);
    expect(ok.body.account_id).toBe('acct-north');
    expect((await call('south', 'acct-north')).status).toBe(403);
    const missing = await call('alpha', 'acct-nowhere');
    expect(missing.status).toBe(409);
    expect(missing.body.message).toContain('not installed');
  });

  it("delivers each account's events only to clients that hold it", async () => {
    await install('south', 'acct-south');
    const hooks: Record<string, string> = {};
    for (const who of ['north', 'south', 'listed', 'alpha'] as const) {
      const route = receiver.route({}, `tenancy-${who}`);
      hooks[who] = route.path;
      const res = await api(who, 'POST', '/api/webhooks', {
        body: { url: route.url, events: ['zoom.*'], secret: `whsec-tenancy-${who}-0123456789` },
      });
      expect(res.status).toBe(201);
    }
    for (const [account, id] of [
      ['acct-north', '101'],
      ['acct-south', '202'],
      [undefined, '303'],
    ] as const) {
      expect((await sendZoomEvent(t.baseUrl, meetingEvent(account, id))).status).toBe(200);
    }
    const meetingIds = (who: string) =>
      receiver.received
        .filter((r) => r.path === hooks[who])
        .map(
          (r) =>
            (JSON.parse(r.body.toString()) as { data: { object: { id: string } } }).data.object.id,
        )
        .sort();
    await waitFor(() => meetingIds('alpha').length === 3, { what: 'alpha to get all three' });
    await waitFor(
      () =>
        meetingIds('north').length >= 1 &&
        meetingIds('south').length >= 1 &&
        meetingIds('listed').length >= 1,
    );
    expect(meetingIds('alpha')).toEqual(['101', '202', '303']);
    expect(meetingIds('north')).toEqual(['101']);
    expect(meetingIds('south')).toEqual(['202']);
    expect(meetingIds('listed')).toEqual(['202']);
    // Event lookup follows the same rule: north finds its own account's events only.
    const looked = await api('north', 'GET', '/api/events?limit=100');
    expect(looked.status).toBe(200);
    const accountsSeen = (looked.body.data as { source: { account_id?: string } | null }[])
      .filter((e) => e.source !== null)
      .map((e) => e.source?.account_id);
    expect(new Set(accountsSeen)).toEqual(new Set(['acct-north']));
  });

  it(`publishes an event in its own request when its kind has more than ${INLINE_FANOUT_MAX} webhooks but few whose owners hold its account`, async () => {
    const db = t.app.get(DataSource);
    // Webhooks that take platform events as they are leave every event to the inbound job:
    // those of the tests before are off meanwhile.
    const asIs = (await db.query(
      `UPDATE webhooks SET active = false WHERE active AND events && ARRAY['zoom.*'] RETURNING id`,
    )) as [{ id: string }[], number];
    // Clients that hold no account of the event's: their webhooks take none of its events.
    const others = (await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       SELECT 'north', 'http://127.0.0.1:9/never-called', ARRAY['job.started'], $1, 'x'
       FROM generate_series(1, $2) RETURNING id`,
      [new SecretCipherService(t.config).encrypt('whsec-others-0123456789'), INLINE_FANOUT_MAX],
    )) as { id: string }[];
    const route = receiver.route({}, 'wide-kind-listed');
    const holder = await api('listed', 'POST', '/api/webhooks', {
      body: { url: route.url, events: ['job.started'], secret: 'whsec-wide-listed-0123456789' },
    });
    expect(holder.status).toBe(201);
    try {
      const sent = await sendZoomEvent(t.baseUrl, meetingEvent('acct-south', '404'));
      expect(sent.status).toBe(200);
      // Published by the statement that stored it: the inbound job (which counts a run) never
      // took it, and its one delivery arrives.
      const rows = (await db.query(
        `SELECT i.processed_at IS NOT NULL AS processed, i.process_attempts AS runs,
           (SELECT count(*)::int FROM deliveries d JOIN events e ON e.id = d.event_id
            WHERE e.idempotency_key LIKE 'inbound:' || i.id || ':%') AS deliveries
         FROM inbound_events i WHERE i.payload->'payload'->'object'->>'id' = '404'`,
      )) as { processed: boolean; runs: number; deliveries: number }[];
      expect(rows).toEqual([{ processed: true, runs: 0, deliveries: 1 }]);
      await waitFor(() => receiver.received.some((r) => r.path === route.path), {
        what: "the account holder's webhook notified",
      });
    } finally {
      // Deleted, not switched off: an inactive webhook still counts against its client's 100.
      await db.query(`DELETE FROM webhooks WHERE id = ANY($1::uuid[])`, [
        others.map((o) => o.id).concat(holder.body.id as string),
      ]);
      await db.query(`UPDATE webhooks SET active = true WHERE id = ANY($1::uuid[])`, [
        asIs[0].map((o) => o.id),
      ]);
    }
  });

  it(
    'renews a due token once for twenty concurrent calls across two processes',
    async () => {
      await install('north', 'acct-due');
      await makeDue('acct-due');
      const other: SpawnedWorker = await startWorker(t, {
        env: {
          ...env,
          APP_ROLE: 'all',
          AUTH_CLIENTS: env.AUTH_CLIENTS,
        },
        workers: spawned,
      });
      const otherToken = await clientToken(other.url, INSTALLERS.north);
      const before = fake.calls.length;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          request(i % 2 === 0 ? t.baseUrl : other.url, 'GET', '/api/users', {
            token: i % 2 === 0 ? (tokens.get('north') as string) : otherToken,
            headers: { 'x-platform-account': 'acct-due' },
          }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(fake.renewals.get('acct-due')).toBe(1);
      const calls = fake.calls.slice(before).filter((c) => c.path === '/v2/users');
      expect(calls).toHaveLength(20);
      expect(calls.every((c) => c.accountId === 'acct-due')).toBe(true);
      other.child.kill('SIGKILL');
    },
    spawnTestMs(1),
  );

  it('keeps a token the platform says lasts 30 s for a minute, not renewing it on every call', async () => {
    fake.expiresIn = 30;
    await install('north', 'acct-short');
    fake.expiresIn = 3599;
    for (let i = 0; i < 10; i++) {
      const res = await api('north', 'GET', '/api/users', {
        headers: { 'x-platform-account': 'acct-short' },
      });
      expect(res.status).toBe(200);
      expect(res.body.account_id).toBe('acct-short');
    }
    // None while the token works; one at most if this machine took over 30 s for ten calls
    // (the platform then refuses it, and the bridge renews once and keeps the new one).
    expect(fake.renewalRequests.get('acct-short') ?? 0).toBeLessThanOrEqual(1);
  });

  it(
    'loses no account when a process is killed during a renewal',
    async () => {
      await install('north', 'acct-kill');
      await makeDue('acct-kill');
      const victim = await startWorker(t, {
        env: { ...env, APP_ROLE: 'all' },
        workers: spawned,
      });
      fake.holdRenewals = true;
      const dying = request(victim.url, 'GET', '/api/users', {
        token: await clientToken(victim.url, INSTALLERS.north),
        headers: { 'x-platform-account': 'acct-kill' },
      }).catch((error: Error) => error);
      await waitFor(() => fake.heldRenewals === 1, { what: 'the renewal to reach the platform' });
      victim.child.kill('SIGKILL');
      await victim.exit;
      fake.releaseRenewals();
      await dying;
      expect(fake.renewals.get('acct-kill')).toBeUndefined();
      const after = await api('north', 'GET', '/api/users', {
        headers: { 'x-platform-account': 'acct-kill' },
      });
      expect(after.status).toBe(200);
      expect(after.body.account_id).toBe('acct-kill');
      expect(fake.renewals.get('acct-kill')).toBe(1);
    },
    spawnTestMs(1),
  );

  it('marks a refused renewal needs_reinstall and tells the installing client', async () => {
    const route = receiver.route({}, 'north-ops');
    northOpsPath = route.path;
    await api('north', 'POST', '/api/webhooks', {
      body: {
        url: route.url,
        events: ['bridge.account.disconnected', 'bridge.account.deauthorized'],
        secret: 'whsec-north-ops-0123456789',
      },
    });
    await install('north', 'acct-refused');
    await makeDue('acct-refused');
    // Someone else used the refresh token: the platform has rotated it away.
    await fetch(`${fake.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: fake.currentRefreshToken('acct-refused') as string,
      }),
    });
    const res = await api('north', 'GET', '/api/users', {
      headers: { 'x-platform-account': 'acct-refused' },
    });
    expect(res.status).toBe(409);
    expect(res.body.message).toContain('needs_reinstall');
    const event = await waitFor(() =>
      bodiesAt(route.path).find((b) => b.event === 'bridge.account.disconnected'),
    );
    expect(event.data).toEqual({ account_id: 'acct-refused', reason: expect.any(String) });
  });

  it('app_deauthorized revokes at once and deletes the account data by the next retention run', async () => {
    const db = t.app.get(DataSource);
    const count = async () => {
      const [row] = await db.query(
        `SELECT (SELECT count(*) FROM events WHERE source->>'account_id' = 'acct-south')::int AS events,
                (SELECT count(*) FROM inbound_events WHERE account_id = 'acct-south')::int AS inbound,
                (SELECT count(*) FROM attendance WHERE account_id = 'acct-south')::int AS attendance`,
      );
      return row as { events: number; inbound: number; attendance: number };
    };
    // A meeting of the account ended: its attendance is kept, and must leave with the account.
    const ended = meetingEvent('acct-south', '204', 'meeting.ended');
    expect((await sendZoomEvent(t.baseUrl, ended)).status).toBe(200);
    await waitFor(async () => (await count()).attendance === 1, {
      what: 'attendance of the ended meeting',
    });
    expect((await count()).events).toBeGreaterThan(0);
    const southOps = receiver.route({}, 'south-ops');
    await api('south', 'POST', '/api/webhooks', {
      body: {
        url: southOps.url,
        events: ['bridge.account.deauthorized'],
        secret: 'whsec-south-ops-0123456789',
      },
    });
    // A holder of every account passes through with the account's token until it leaves.
    const asAlpha = () =>
      api('alpha', 'GET', '/api/users', { headers: { 'x-platform-account': 'acct-south' } });
    expect((await asAlpha()).status).toBe(200);
    const webhooksBefore = (await db.query(`SELECT count(*)::int AS n FROM webhooks`))[0].n;
    const deauthorized = (clientId: string, at: string) =>
      sendZoomEvent(t.baseUrl, {
        event: 'app_deauthorized',
        event_ts: Date.now(),
        payload: {
          account_id: 'acct-south',
          user_id: 'user-of-acct-south',
          signature: 'sig',
          deauthorization_time: at,
          client_id: clientId,
        },
      });
    // Another app of the same account uninstalled: not ours, nothing leaves.
    expect((await deauthorized('another-app', '2026-01-01T09:00:00.000Z')).status).toBe(200);
    expect(await t.app.get(DeauthorizationWatcher).check()).not.toContain('acct-south');
    const leftAt = new Date(Date.now() - 5_000).toISOString();
    const res = await deauthorized(fake.clientId, leftAt);
    expect(res.status).toBe(200);
    await waitFor(
      async () => {
        const listed = await api('south', 'GET', '/api/platform/accounts');
        return listed.body.data.find(
          (a: { account_id: string; status: string }) =>
            a.account_id === 'acct-south' && a.status === 'revoked',
        );
      },
      { what: 'acct-south to be revoked' },
    );
    const [tokensLeft] = await db.query(
      `SELECT refresh_token_encrypted FROM installations WHERE account_id = 'acct-south'`,
    );
    expect(tokensLeft.refresh_token_encrypted).toBeNull();
    // Its tokens are gone for every holder at once, the one this process held too.
    const calls = fake.calls.length;
    const after = await asAlpha();
    expect(after.status).toBe(409);
    expect(after.body.message).toContain('revoked');
    expect(fake.calls.slice(calls)).toEqual([]);
    const told = await waitFor(() =>
      bodiesAt(southOps.path).find((b) => b.event === 'bridge.account.deauthorized'),
    );
    expect(told.data).toEqual({
      account_id: 'acct-south',
      reason: 'app_deauthorized',
      deauthorized_at: leftAt,
    });
    await waitFor(
      async () => {
        const left = await count();
        return left.events === 0 && left.inbound === 0 && left.attendance === 0;
      },
      { what: "acct-south's data to be deleted", timeoutMs: 30_000 },
    );
    expect((await db.query(`SELECT count(*)::int AS n FROM webhooks`))[0].n).toBe(webhooksBefore);
  });

  it('DELETE revokes at the platform and removes the account', async () => {
    const refresh = fake.currentRefreshToken('acct-north');
    const res = await api('north', 'DELETE', '/api/platform/accounts/acct-north');
    expect(res.status).toBe(204);
    expect(fake.revokedTokens).toContain(refresh);
    const told = await waitFor(() =>
      bodiesAt(northOpsPath).find(
        (b) => b.event === 'bridge.account.deauthorized' && b.data.account_id === 'acct-north',
      ),
    );
    expect(told.data).toEqual({
      account_id: 'acct-north',
      reason: 'removed',
      deauthorized_at: expect.stringMatching(/Z$/),
    });
    const held = await api('alpha', 'GET', '/api/users', {
      headers: { 'x-platform-account': 'acct-north' },
    });
    expect(held.status).toBe(409);
    expect(held.body.message).toContain('revoked');
    expect((await api('south', 'DELETE', '/api/platform/accounts/acct-due')).status).toBe(404);
    const after = await api('north', 'GET', '/api/users', {
      headers: { 'x-platform-account': 'acct-north' },
    });
    expect(after.status).toBe(403);
  });

  it('installing an account again replaces its tokens and its installer', async () => {
    await install('north', 'acct-again');
    const before = fake.currentRefreshToken('acct-again');
    await install('south', 'acct-again');
    expect(fake.currentRefreshToken('acct-again')).not.toBe(before);
    const held = (who: Installer) =>
      api(who, 'GET', '/api/users', { headers: { 'x-platform-account': 'acct-again' } });
    const south = await held('south');
    expect(south.status).toBe(200);
    expect(south.body.account_id).toBe('acct-again');
    expect((await held('north')).status).toBe(403);
    const listed = await api('south', 'GET', '/api/platform/accounts');
    expect(listed.body.data).toContainEqual(
      expect.objectContaining({
        account_id: 'acct-again',
        installed_by: 'south',
        status: 'active',
      }),
    );
    const rows = await t.app
      .get(DataSource)
      .query(`SELECT refresh_token_encrypted FROM installations WHERE account_id = 'acct-again'`);
    expect(rows).toHaveLength(1);
  });

  it('meb accounts: list, install and remove, as the API', async () => {
    await withCli(t.baseUrl, async (meb) => {
      const { client_id, client_secret } = INSTALLERS.south;
      expect(
        (await meb('login', '--client-id', client_id, '--client-secret', client_secret)).code,
      ).toBe(EXIT.ok);
      const installing = await meb('accounts', 'install');
      expect(installing.code).toBe(EXIT.ok);
      expect(installing.out).toContain(`${fake.baseUrl}/oauth/authorize?response_type=code`);
      const table = await meb('accounts', 'list');
      expect(table.out).toMatch(/acct-again\W+active\W+south/);
      expect((await meb('accounts', 'remove', 'acct-again')).code).toBe(EXIT.ok);
      const listed = JSON.parse((await meb('--json', 'accounts', 'list')).out);
      expect(listed.data).toContainEqual(
        expect.objectContaining({ account_id: 'acct-again', status: 'revoked' }),
      );
      expect((await meb('accounts', 'remove', 'acct-again')).code).not.toBe(EXIT.ok);
    });
  });

  it('lets an account leave once, however many workers see it leave at the same time', async () => {
    await install('north', 'acct-twice');
    const accounts = t.app.get(AccountsService);
    const at = new Date();
    await Promise.all([
      accounts.deauthorized('acct-twice', at),
      accounts.deauthorized('acct-twice', at),
    ]);
    const [told] = await t.app.get(DataSource).query(
      `SELECT count(*)::int AS n FROM events
       WHERE kind = 'bridge.account.deauthorized' AND data->>'account_id' = 'acct-twice'`,
    );
    expect(told.n).toBe(1);
  });
});
