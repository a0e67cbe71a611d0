import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A REST call the fake answered, with the account whose token it carried (null: none valid). */
export interface AccountCall {
  method: string;
  path: string;
  accountId: string | null;
  token: string | null;
}

interface Grant {
  code: string;
  accountId: string;
  userId: string;
  redirectUri: string;
  challenge: string;
  used: boolean;
}

interface AccountState {
  /** The one refresh token that works now (the platform rotates them). */
  refreshToken: string;
  accessTokens: Map<string, number>;
  revoked: boolean;
}

const b64url = (bytes: Buffer) => bytes.toString('base64url');
const token = (kind: string) => `${kind}.${b64url(randomBytes(18))}`;

/**
 * The platform's authorization-code OAuth for installed apps, as the platform documents it
 * (docs/accounts.md): authorize (a code per account, redirecting to redirect_uri), the code
 * exchange (Basic app credentials; single-use code; redirect_uri must match; PKCE S256 checked),
 * the refresh-token renewal that rotates the refresh token (the one used is refused
 * afterwards with `invalid_grant`), /v2/users/me, revoke, and every other /v2 call answered
 * with the account of the token it carried, recorded. A renewal can be held (`holdRenewals`):
 * the rotation happens only when the answer is sent, and not at all to a caller that went away
 * meanwhile (its connection closed), as a request that never completed.
 */
export class FakeZoomOAuth {
  private readonly server: Server;
  private readonly grants = new Map<string, Grant>();
  private readonly accounts = new Map<string, AccountState>();
  private readonly tokenOwners = new Map<string, string>();
  private held: (() => void)[] = [];
  readonly calls: AccountCall[] = [];
  /** Renewals the fake completed (rotated), per account. */
  readonly renewals = new Map<string, number>();
  /** Renewals that came in, per account (held, answered, refused or abandoned). */
  readonly renewalRequests = new Map<string, number>();
  /** Seconds an access token lives (the bridge keeps even a short one a minute). */
  expiresIn = 3599;
  holdRenewals = false;
  revokedTokens: string[] = [];
  /**
   * Per account, the past meetings its dashboard report lists (`/metrics/meetings`), each row
   * as the platform writes it; their participant reports and the webinars are empty.
   */
  readonly reports = new Map<string, Record<string, unknown>[]>();
  /** Accounts at their platform limit: every REST call answers 429 with this Retry-After. */
  readonly limited = new Map<string, number>();
  baseUrl = '';

  constructor(
    readonly clientId = 'app-client-id',
    readonly clientSecret = 'app-client-secret-0123456789',
  ) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks).toString('utf8')));
    });
  }

  async start(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.releaseRenewals();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The account's refresh token that works now. */
  currentRefreshToken(accountId: string): string | undefined {
    return this.accounts.get(accountId)?.refreshToken;
  }

  /** Renewals waiting while holdRenewals is on. */
  get heldRenewals(): number {
    return this.held.length;
  }

  releaseRenewals(): void {
    this.holdRenewals = false;
    const held = this.held;
    this.held = [];
    for (const answer of held) answer();
  }

  /**
   * What the installing person's browser does: GET the install URL as `accountId`; the fake
   * answers the redirect to redirect_uri with a code (or `error=access_denied` when `deny`).
   */
  async authorize(installUrl: string, accountId: string, deny = false): Promise<string> {
    const url = new URL(installUrl);
    url.searchParams.set('fake_account', accountId);
    if (deny) url.searchParams.set('fake_deny', '1');
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status !== 302 || !location) throw new Error(`authorize: ${res.status}`);
    return location;
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private basicOk(req: IncomingMessage): boolean {
    const expected = `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`;
    return req.headers.authorization === expected;
  }

  private issue(accountId: string): Record<string, unknown> {
    let state = this.accounts.get(accountId);
    if (!state) {
      state = { refreshToken: '', accessTokens: new Map(), revoked: false };
      this.accounts.set(accountId, state);
    }
    const access = token('access');
    state.refreshToken = token('refresh');
    state.revoked = false;
    state.accessTokens.set(access, Date.now() + this.expiresIn * 1000);
    this.tokenOwners.set(access, accountId);
    this.tokenOwners.set(state.refreshToken, accountId);
    return {
      access_token: access,
      token_type: 'bearer',
      refresh_token: state.refreshToken,
      expires_in: this.expiresIn,
      scope: 'meeting:read user:read',
      api_url: this.baseUrl,
    };
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (req.method === 'GET' && url.pathname === '/oauth/authorize')
      return this.authorizePage(url, res);
    if (req.method === 'POST' && url.pathname === '/oauth/token')
      return this.tokenEndpoint(req, res, body);
    if (req.method === 'POST' && url.pathname === '/oauth/revoke') {
      if (!this.basicOk(req)) return this.json(res, 401, { error: 'invalid_client' });
      const revoked = new URLSearchParams(body).get('token') ?? '';
      this.revokedTokens.push(revoked);
      const owner = this.tokenOwners.get(revoked);
      const state = owner === undefined ? undefined : this.accounts.get(owner);
      if (state) state.revoked = true;
      return this.json(res, 200, { status: 'success' });
    }
    if (url.pathname.startsWith('/v2/')) return this.rest(req, res, url);
    this.json(res, 404, { code: 404, message: 'Not found' });
  }

  private authorizePage(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const redirect = new URL(q.get('redirect_uri') ?? '');
    redirect.searchParams.set('state', q.get('state') ?? '');
    if (q.get('fake_deny')) {
      redirect.searchParams.set('error', 'access_denied');
    } else {
      if (q.get('client_id') !== this.clientId || q.get('code_challenge_method') !== 'S256') {
        return this.json(res, 400, { error: 'invalid_request' });
      }
      const code = b64url(randomBytes(16));
      this.grants.set(code, {
        code,
        accountId: q.get('fake_account') ?? 'acct-default',
        userId: `user-of-${q.get('fake_account')}`,
        redirectUri: q.get('redirect_uri') ?? '',
        challenge: q.get('code_challenge') ?? '',
        used: false,
      });
      redirect.searchParams.set('code', code);
    }
    res.writeHead(302, { location: redirect.href });
    res.end();
  }

  private tokenEndpoint(req: IncomingMessage, res: ServerResponse, body: string): void {
    if (!this.basicOk(req))
      return this.json(res, 401, { reason: 'Invalid client', error: 'invalid_client' });
    const form = new URLSearchParams(body);
    const refused = (reason: string) => this.json(res, 400, { reason, error: 'invalid_grant' });
    if (form.get('grant_type') === 'authorization_code') {
      const grant = this.grants.get(form.get('code') ?? '');
      if (!grant || grant.used) return refused('Invalid authorization code');
      grant.used = true;
      if (form.get('redirect_uri') !== grant.redirectUri) return refused('Redirect URI mismatch');
      const verifier = form.get('code_verifier') ?? '';
      const challenge = b64url(createHash('sha256').update(verifier, 'ascii').digest());
      if (challenge !== grant.challenge) return refused('Invalid code verifier');
      return this.json(res, 200, this.issue(grant.accountId));
    }
    if (form.get('grant_type') === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      const accountId = this.tokenOwners.get(presented);
      if (accountId !== undefined) {
        this.renewalRequests.set(accountId, (this.renewalRequests.get(accountId) ?? 0) + 1);
      }
      const answer = () => {
        const state = accountId === undefined ? undefined : this.accounts.get(accountId);
        if (!state || state.revoked || state.refreshToken !== presented) {
          return refused('Invalid Token!');
        }
        // A caller that went away never got the new token: the platform keeps the old one.
        if (req.socket.destroyed) return;
        this.renewals.set(accountId as string, (this.renewals.get(accountId as string) ?? 0) + 1);
        this.json(res, 200, this.issue(accountId as string));
      };
      if (this.holdRenewals) this.held.push(answer);
      else answer();
      return;
    }
    this.json(res, 400, { error: 'unsupported_grant_type' });
  }

  private rest(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
    const accountId = bearer === null ? undefined : this.tokenOwners.get(bearer);
    const state = accountId === undefined ? undefined : this.accounts.get(accountId);
    const expiry = bearer === null ? undefined : state?.accessTokens.get(bearer);
    const valid = expiry !== undefined && expiry > Date.now() && !state?.revoked;
    this.calls.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      accountId: valid ? (accountId as string) : null,
      token: bearer,
    });
    if (!valid) return this.json(res, 401, { code: 124, message: 'Invalid access token.' });
    const limited = this.limited.get(accountId as string);
    if (limited !== undefined) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(limited) });
      res.end(
        JSON.stringify({
          code: 429,
          message: 'You have reached the maximum daily rate limit for this API.',
        }),
      );
      return;
    }
    if (url.pathname === '/v2/users/me') {
      return this.json(res, 200, { id: `user-of-${accountId}`, account_id: accountId, type: 1 });
    }
    const report = /^\/v2\/metrics\/(meetings|webinars)(\/[^/]+\/participants)?$/.exec(
      url.pathname,
    );
    if (report) {
      const past = url.searchParams.get('type') !== 'live';
      const rows =
        report[1] === 'meetings' && !report[2] && past
          ? (this.reports.get(accountId as string) ?? [])
          : [];
      const list = report[2] ? 'participants' : report[1];
      return this.json(res, 200, { [list]: rows, next_page_token: '' });
    }
    this.json(res, 200, { account_id: accountId, page_size: 30, users: [] });
  }
}
