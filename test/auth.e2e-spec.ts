import { createHmac } from 'node:crypto';
import { JwtService } from '@nestjs/jwt';
import {
  ADDRESS_FAILURE_BUDGET,
  AuthFailureLimiter,
  MAX_FAILURES,
} from '../src/auth/auth-failure-limiter';
import { SCOPES } from '../src/config/config.types';
import { Json, request } from './support/http';
import { rawExchange } from './support/raw-http';
import { apiRoutes, concretePath } from './support/routes';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';

const ALL_SCOPES = CLIENTS.alpha.scopes;
/** A client whose secret holds characters that form-encoding changes (`+`, `%`, `/`). */
const ENCODED = {
  client_id: 'encoded',
  client_secret: 'pl+us%2F/secret-0123456789==',
  scopes: 'webhooks:read',
};
const AUDIENCE = 'meeting-event-bridge';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the service’s own authentication', () => {
  let t: TestApp;
  let jwt: JwtService;
  /** Each test guesses from its own address (X-Forwarded-For), so failures never add up across tests. */
  let addressCounter = 0;
  const nextAddress = () => `198.51.100.${++addressCounter}`;

  const tokenRequest = (
    body: Record<string, string>,
    headers: Record<string, string> = {},
    from = nextAddress(),
  ) =>
    request(t.baseUrl, 'POST', '/oauth/token', {
      body: new URLSearchParams(body).toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': from,
        ...headers,
      },
    });
  const sign = (claims: Record<string, unknown>, secret = t.config.auth.tokenSecret) =>
    jwt.sign(claims, { secret, algorithm: 'HS256' });
  const validClaims = (overrides: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return {
      sub: 'alpha',
      scope: ALL_SCOPES,
      aud: AUDIENCE,
      iss: AUDIENCE,
      iat: now,
      exp: now + 600,
      ...overrides,
    };
  };
  const listWith = (token: string) => request(t.baseUrl, 'GET', '/api/webhooks', { token });

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        AUTH_CLIENTS: JSON.stringify([...Object.values(CLIENTS), ENCODED]),
        // One trusted hop, so each test can speak from its own X-Forwarded-For address.
        TRUST_PROXY_HOPS: '1',
      },
    });
    jwt = new JwtService();
  });
  afterAll(() => t.close());

  describe('POST /oauth/token', () => {
    it('issues a bearer token for Basic client credentials', async () => {
      const res = await tokenRequest(
        { grant_type: 'client_credentials' },
        { authorization: basic(CLIENTS.alpha.client_id, CLIENTS.alpha.client_secret) },
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        expires_in: 3600,
        scope: ALL_SCOPES,
      });
      expect(res.headers.get('cache-control')).toBe('no-store');
      const claims = jwt.decode(res.body.access_token);
      expect(claims).toMatchObject({ sub: 'alpha', aud: AUDIENCE });
      expect(claims.exp - claims.iat).toBe(3600);
      expect((await listWith(res.body.access_token)).status).toBe(200);
    });

    it('issues a token for client_id and client_secret in the form body', async () => {
      const res = await tokenRequest({
        grant_type: 'client_credentials',
        client_id: CLIENTS.reader.client_id,
        client_secret: CLIENTS.reader.client_secret,
      });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('webhooks:read');
      expect((await listWith(res.body.access_token)).status).toBe(200);
    });

    it('accepts the request exactly as Swagger UI’s Authorize sends it', async () => {
      // swagger-ui authorizeApplication: Basic btoa(id:secret) unencoded, scopes joined by " ".
      const headers = {
        accept: 'application/json, text/plain, */*',
        'x-requested-with': 'XMLHttpRequest',
      };
      for (const [id, secret, scope, expected] of [
        [CLIENTS.alpha.client_id, CLIENTS.alpha.client_secret, '', ALL_SCOPES],
        [CLIENTS.alpha.client_id, CLIENTS.alpha.client_secret, 'webhooks:read', 'webhooks:read'],
        [ENCODED.client_id, ENCODED.client_secret, 'webhooks:read', 'webhooks:read'],
      ]) {
        const res = await tokenRequest(
          { grant_type: 'client_credentials', scope },
          { ...headers, authorization: basic(id, secret) },
        );
        expect(res.status).toBe(200);
        expect(res.body.scope).toBe(expected);
      }
      const doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
      expect(doc.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
        '/oauth/token',
      );
    });

    it('accepts form-encoded Basic credentials (RFC 6749 §2.3.1) and a JSON body', async () => {
      const encoded = basic(
        encodeURIComponent(ENCODED.client_id),
        encodeURIComponent(ENCODED.client_secret),
      );
      const res = await tokenRequest(
        { grant_type: 'client_credentials' },
        { authorization: encoded },
      );
      expect(res.status).toBe(200);
      const json = await request(t.baseUrl, 'POST', '/oauth/token', {
        body: {
          grant_type: 'client_credentials',
          client_id: ENCODED.client_id,
          client_secret: ENCODED.client_secret,
        },
      });
      expect(json.status).toBe(200);
    });

    it('answers a body that is neither a form nor JSON (or has no Content-Type) 415, naming the form type', async () => {
      const json = JSON.stringify({
        grant_type: 'client_credentials',
        client_id: CLIENTS.alpha.client_id,
        client_secret: CLIENTS.alpha.client_secret,
      });
      const host = new URL(t.baseUrl).host;
      const untyped = await rawExchange(
        t.baseUrl,
        `POST /oauth/token HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n` +
          `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
      );
      expect(untyped.status).toBe(415);
      expect(untyped.body).toMatchObject({
        statusCode: 415,
        message: expect.stringContaining('application/x-www-form-urlencoded'),
      });
      expect((untyped.body as Json).message).toContain('none was given');
      const plain = await request(t.baseUrl, 'POST', '/oauth/token', {
        body: json,
        headers: { 'content-type': 'text/plain' },
      });
      expect(plain.status).toBe(415);
      expect(plain.body.message).toContain('got "text/plain"');
    });

    it('narrows to a requested subset of the client’s scopes', async () => {
      const res = await tokenRequest(
        { grant_type: 'client_credentials', scope: 'webhooks:read  webhooks:read' },
        { authorization: basic(CLIENTS.alpha.client_id, CLIENTS.alpha.client_secret) },
      );
      expect(res.body.scope).toBe('webhooks:read');
      expect((await listWith(res.body.access_token)).status).toBe(200);
      const write = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token: res.body.access_token,
        body: { url: 'http://127.0.0.1:9/x', events: ['job.started'], secret: 'x'.repeat(20) },
      });
      expect(write.status).toBe(403);
    });

    const credentialFailure = {
      statusCode: 401,
      error: 'invalid_client',
      message: 'Client authentication failed',
      error_description: 'Client authentication failed',
    };

    it.each<[string, Record<string, string>, Record<string, string>]>([
      [
        'a wrong secret',
        { grant_type: 'client_credentials' },
        { authorization: basic('alpha', 'wrong-secret-0123456789') },
      ],
      [
        'an unknown client',
        { grant_type: 'client_credentials' },
        { authorization: basic('nobody', CLIENTS.alpha.client_secret) },
      ],
      [
        'another client’s secret',
        { grant_type: 'client_credentials' },
        { authorization: basic('beta', CLIENTS.alpha.client_secret) },
      ],
      [
        'a wrong secret in the body',
        { grant_type: 'client_credentials', client_id: 'alpha', client_secret: 'nope' },
        {},
      ],
      [
        'a secret differing only in case',
        { grant_type: 'client_credentials' },
        { authorization: basic('alpha', CLIENTS.alpha.client_secret.toUpperCase()) },
      ],
    ])('answers 401 invalid_client for %s, with one body for all', async (_, body, headers) => {
      const res = await tokenRequest(body, headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(credentialFailure);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(res.text).not.toContain(CLIENTS.alpha.client_secret);
    });

    it.each<[string, Record<string, string>, Record<string, string>]>([
      ['no credentials', { grant_type: 'client_credentials' }, {}],
      [
        'a Basic header without a colon',
        { grant_type: 'client_credentials' },
        { authorization: `Basic ${Buffer.from('alpha').toString('base64')}` },
      ],
      ['a client_id without secret', { grant_type: 'client_credentials', client_id: 'alpha' }, {}],
    ])('answers 401 invalid_client for %s', async (_, body, headers) => {
      const res = await tokenRequest(body, headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: 'invalid_client' });
    });

    it.each<[string, Record<string, string>, string]>([
      ['a missing grant_type', {}, 'invalid_request'],
      ['grant_type=password', { grant_type: 'password' }, 'unsupported_grant_type'],
      [
        'grant_type=authorization_code',
        { grant_type: 'authorization_code' },
        'unsupported_grant_type',
      ],
      ['an unknown scope', { grant_type: 'client_credentials', scope: 'admin' }, 'invalid_scope'],
      [
        'a scope the client lacks',
        { grant_type: 'client_credentials', scope: 'webhooks:read webhooks:write' },
        'invalid_scope',
      ],
    ])('answers 400 %s with the RFC 6749 code', async (_, body, code) => {
      const res = await tokenRequest(body, {
        authorization: basic(CLIENTS.reader.client_id, CLIENTS.reader.client_secret),
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: code });
      expect(res.body.error_description).toEqual(res.body.message);
    });

    it.each<[string, string, string]>([
      [
        'names a scope that does not exist as such',
        'webhooks:read admin',
        `Scope "admin" does not exist; the scopes are ${SCOPES.join(', ')}`,
      ],
      [
        'names the scope the client lacks',
        'webhooks:read webhooks:write',
        'Client "reader" lacks scope webhooks:write',
      ],
    ])('invalid_scope %s', async (_, scope, description) => {
      const res = await tokenRequest(
        { grant_type: 'client_credentials', scope },
        { authorization: basic(CLIENTS.reader.client_id, CLIENTS.reader.client_secret) },
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'invalid_scope',
        message: description,
        error_description: description,
      });
    });
  });

  describe('rate limit on failed authentication', () => {
    const wrong = (from: string) =>
      tokenRequest(
        { grant_type: 'client_credentials' },
        { authorization: basic('beta', 'not-the-secret-0123456789') },
        from,
      );
    const right = (from: string, client: 'alpha' | 'beta' = 'beta') =>
      tokenRequest(
        { grant_type: 'client_credentials' },
        { authorization: basic(CLIENTS[client].client_id, CLIENTS[client].client_secret) },
        from,
      );

    it('answers 429 with Retry-After after 10 failures, even to the right secret', async () => {
      const from = nextAddress();
      for (let i = 0; i < 10; i++) expect((await wrong(from)).status).toBe(401);
      for (const res of [await wrong(from), await right(from)]) {
        expect(res.status).toBe(429);
        expect(res.body).toEqual({
          statusCode: 429,
          error: 'Too Many Requests',
          message: expect.stringMatching(/^Too many failed authentication attempts/),
        });
        const retryAfter = Number(res.headers.get('retry-after'));
        expect(Number.isInteger(retryAfter)).toBe(true);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }
      // Keyed by client and address: the same client elsewhere, and another client here, pass.
      expect((await right(nextAddress())).status).toBe(200);
      expect((await right(from, 'alpha')).status).toBe(200);
    });

    it('counts failures with credentials in the body the same way', async () => {
      const from = nextAddress();
      for (let i = 0; i < 10; i++) {
        const res = await tokenRequest(
          { grant_type: 'client_credentials', client_id: 'beta', client_secret: `guess-${i}` },
          {},
          from,
        );
        expect(res.status).toBe(401);
      }
      expect((await right(from)).status).toBe(429);
    });

    it('does not count successful requests or 9 failures', async () => {
      const from = nextAddress();
      for (let i = 0; i < 15; i++) expect((await right(from)).status).toBe(200);
      for (let i = 0; i < 9; i++) expect((await wrong(from)).status).toBe(401);
      expect((await right(from)).status).toBe(200);
    });

    it('cannot be flushed with junk client ids: past the address budget they are refused before they are counted', async () => {
      const from = nextAddress();
      for (let i = 0; i < MAX_FAILURES; i++) expect((await wrong(from)).status).toBe(401);
      expect((await right(from)).status).toBe(429);

      // Each junk id is a new caller; 10,000 of them used to push (beta, from) out of the
      // per-caller table. Refused unexamined once the address budget is spent, they never
      // enter it, so no number of them can (src/auth/auth-failure-limiter.spec.ts sends the
      // whole 10,000 to the limiter itself).
      const limiter = t.app.get(AuthFailureLimiter);
      const tracked = limiter.trackedCallers;
      const statuses: number[] = [];
      for (let i = 0; i < 4 * ADDRESS_FAILURE_BUDGET; i++) {
        const res = await tokenRequest(
          { grant_type: 'client_credentials' },
          { authorization: basic(`junk-${i}`, 'junk-secret-0123456789') },
          from,
        );
        statuses.push(res.status);
      }
      const counted = ADDRESS_FAILURE_BUDGET - MAX_FAILURES;
      expect(statuses).toEqual([
        ...Array(counted).fill(401),
        ...Array(4 * ADDRESS_FAILURE_BUDGET - counted).fill(429),
      ]);
      // At most: the table may also have forgotten earlier tests' callers meanwhile.
      expect(limiter.trackedCallers - tracked).toBeLessThanOrEqual(counted);

      expect((await right(from)).status).toBe(429);
      // The whole address waits, for any client; others are untouched.
      expect((await right(from, 'alpha')).status).toBe(429);
      expect((await right(nextAddress())).status).toBe(200);
    });

    it('blocks guessing of unknown client ids too', async () => {
      const from = nextAddress();
      const guess = () =>
        tokenRequest(
          { grant_type: 'client_credentials' },
          { authorization: basic('ghost', 'guess-0123456789abcdef') },
          from,
        );
      for (let i = 0; i < 10; i++) expect((await guess()).status).toBe(401);
      expect((await guess()).status).toBe(429);
    });
  });

  describe('bearer tokens on /api routes', () => {
    it.each<[string, () => string]>([
      ['no Authorization header', () => ''],
      ['an empty bearer', () => 'Bearer '],
      ['a Basic header', () => basic('alpha', CLIENTS.alpha.client_secret)],
      ['a malformed token', () => 'Bearer not.a.jwt'],
      ['a token with spaces', () => 'Bearer abc def'],
    ])('answers 401 to %s', async (_, header) => {
      const res = await request(t.baseUrl, 'GET', '/api/webhooks', {
        headers: header() ? { authorization: header() } : {},
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('accepts a token crafted with the right key and claims (the checks below are not vacuous)', async () => {
      expect((await listWith(sign(validClaims()))).status).toBe(200);
    });

    it.each<[string, () => string]>([
      [
        'an expired token',
        () => {
          const now = Math.floor(Date.now() / 1000);
          return sign(validClaims({ iat: now - 3700, exp: now - 100 }));
        },
      ],
      ['a token signed with another key', () => sign(validClaims(), 'x'.repeat(48))],
      [
        'an unsigned token (alg none)',
        () => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(validClaims())}.`,
      ],
      [
        'a token whose payload was changed after signing',
        () => {
          const [header, , signature] = sign(validClaims({ scope: 'webhooks:read' })).split('.');
          return `${header}.${b64url(validClaims())}.${signature}`;
        },
      ],
      [
        'a token signed with HS512 under the right key',
        () => jwt.sign(validClaims(), { secret: t.config.auth.tokenSecret, algorithm: 'HS512' }),
      ],
      ['a token for another audience', () => sign(validClaims({ aud: 'someone-else' }))],
      ['a token from another issuer', () => sign(validClaims({ iss: 'someone-else' }))],
      ['a token without a subject', () => sign(validClaims({ sub: undefined }))],
      [
        'a token signed by hand with a wrong HMAC',
        () => {
          const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(validClaims())}`;
          const mac = createHmac('sha256', 'guess').update(head).digest('base64url');
          return `${head}.${mac}`;
        },
      ],
    ])('answers 401 to %s', async (_, token) => {
      const res = await listWith(token());
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'The bearer token is invalid or expired',
      });
    });

    it('answers 403 naming the scope to a valid token without it', async () => {
      const token = await t.token('reader');
      const res = await request(
        t.baseUrl,
        'DELETE',
        `/api/webhooks/${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`,
        { token },
      );
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('webhooks:write');
      expect(res.headers.get('www-authenticate')).toContain('insufficient_scope');
    });

    it('never logs a bearer token or a client secret', () => {
      const all = t.logs.join('\n');
      for (const client of [...Object.values(CLIENTS), ENCODED]) {
        expect(all).not.toContain(client.client_secret);
      }
      expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    });
  });

  describe('no /api route is left open', () => {
    it('finds the routes it guards (this check is not vacuous)', () => {
      expect(apiRoutes(t.app)).toEqual(
        expect.arrayContaining([
          ['POST', '/api/webhooks'],
          ['GET', '/api/webhooks'],
          ['GET', '/api/webhooks/:id'],
          ['PATCH', '/api/webhooks/:id'],
          ['DELETE', '/api/webhooks/:id'],
        ]),
      );
    });

    it('answers 401 on every /api route without a token, or with a forged one', async () => {
      const forged = sign(validClaims(), 'forged-key-'.repeat(4));
      for (const [method, path] of apiRoutes(t.app)) {
        for (const token of [undefined, forged]) {
          const res = await request(t.baseUrl, method, concretePath(path), { token });
          expect([method, path, res.status]).toEqual([method, path, 401]);
        }
      }
    });

    it('answers 403 on every /api route to a valid token with no scopes', async () => {
      const scopeless = sign(validClaims({ scope: '' }));
      for (const [method, path] of apiRoutes(t.app)) {
        const res = await request(t.baseUrl, method, concretePath(path), { token: scopeless });
        expect([method, path, res.status]).toEqual([method, path, 403]);
      }
    });

    it('documents every /api route with the oauth2 scopes and 401/403 responses with their own examples', async () => {
      const doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
      const documented = Object.entries(doc.paths as Record<string, Record<string, Json>>)
        .filter(([path]) => path.startsWith('/api'))
        .flatMap(([path, ops]) =>
          Object.entries(ops).map(([method, op]) => ({ method, path, op })),
        );
      const routes = apiRoutes(t.app).map(([m, p]) => `${m} ${p.replace(/:([A-Za-z]+)/g, '{$1}')}`);
      expect(documented.map((d) => `${d.method.toUpperCase()} ${d.path}`).sort()).toEqual(
        routes.sort(),
      );
      for (const { op } of documented) {
        const oauth = op.security.find((s: Json) => s.oauth2)?.oauth2;
        expect(oauth?.length).toBeGreaterThan(0);
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403']));
        // The download route documents its answers under its file types; JSON elsewhere.
        const example = (status: string) =>
          (Object.values(op.responses[status].content)[0] as Json).example;
        expect(example('401')).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
        expect(example('403')).toEqual({
          statusCode: 403,
          error: 'Forbidden',
          message: `The token lacks scope ${oauth.join(', ')}`,
        });
      }
    });
  });
});

describe('token rate limit without a trusted proxy', () => {
  it('keys on the peer address, so a forged X-Forwarded-For does not reset the count', async () => {
    const t = await startTestApp();
    try {
      const attempt = (i: number) =>
        request(t.baseUrl, 'POST', '/oauth/token', {
          body: 'grant_type=client_credentials',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from('alpha:wrong-secret').toString('base64')}`,
            'x-forwarded-for': `203.0.113.${i}`,
          },
        });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await attempt(i)).status);
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual([429, 429]);
    } finally {
      await t.close();
    }
  });
});
