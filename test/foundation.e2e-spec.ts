import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Json, jsonOf } from './support/http';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/** A client-credentials request of the alpha client, as fetch options. */
const tokenRequest = (): RequestInit => ({
  headers: {
    authorization: `Basic ${Buffer.from(`${CLIENTS.alpha.client_id}:${CLIENTS.alpha.client_secret}`).toString('base64')}`,
  },
  body: new URLSearchParams({ grant_type: 'client_credentials' }),
});

describe('foundation: errors, docs, logs (role all)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** pino-http's line for a finished request (it carries the response), by request id. */
  const completionLines = (id: string): Json[] =>
    t.logs
      .map((l) => JSON.parse(l) as Json)
      .filter((l) => l.req?.id === id && l.res?.statusCode !== undefined);

  it('answers liveness and readiness with both dependencies up', async () => {
    expect(await jsonOf(await fetch(`${t.baseUrl}/health/live`))).toEqual({ status: 'ok' });
    const ready = await fetch(`${t.baseUrl}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
  });

  it('has run the migrations into its own database', async () => {
    const ds = t.app.get(DataSource);
    const tables = await ds.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    );
    expect(tables.map((r: { table_name: string }) => r.table_name)).toEqual(
      expect.arrayContaining([
        'deliveries',
        'delivery_attempts',
        'events',
        'inbound_events',
        'migrations',
        'webhooks',
      ]),
    );
  });

  it('gives 404 in the error shape for an unknown route', async () => {
    const res = await fetch(`${t.baseUrl}/no/such/route`);
    expect(res.status).toBe(404);
    expect(await jsonOf(res)).toEqual({
      statusCode: 404,
      error: 'Not Found',
      message: 'Cannot GET /no/such/route',
    });
  });

  it('gives 400 in the error shape for malformed JSON', async () => {
    const res = await fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"grant_type": ',
    });
    expect(res.status).toBe(400);
    const body = await jsonOf(res);
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(body.message).toMatch(/JSON/);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.js|node_modules/);
  });

  it('gives 413 in the error shape for a body over 1 MiB', async () => {
    const res = await fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(res.status).toBe(413);
    expect(await jsonOf(res)).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than 1 MiB',
    });
  });

  it('accepts a body just under 1 MiB', async () => {
    const res = await fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'x'.repeat(1024 * 1024 - 100) }),
    });
    expect(res.status).toBe(400);
    expect((await jsonOf(res)).error).toBe('unsupported_grant_type');
  });

  it('serves Swagger UI and the OpenAPI document with the client-credentials scheme', async () => {
    const ui = await fetch(`${t.baseUrl}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger-ui');
    const doc = await jsonOf(await fetch(`${t.baseUrl}/docs-json`));
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes.oauth2).toMatchObject({
      type: 'oauth2',
      flows: { clientCredentials: { tokenUrl: '/oauth/token' } },
    });
    expect(
      Object.keys(doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes),
    ).toEqual(
      expect.arrayContaining([
        'webhooks:read',
        'webhooks:write',
        'meetings:read',
        'recordings:read',
      ]),
    );
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('logs one JSON line per request with its request id, and redacts authorization', async () => {
    const res = await fetch(`${t.baseUrl}/no/such/thing`, {
      headers: { authorization: 'Bearer super-secret-token-value', 'x-request-id': 'req-abc-123' },
    });
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
    const [line] = await waitFor(() => {
      const found = completionLines('req-abc-123');
      return found.length > 0 && found;
    });
    expect(line).toMatchObject({ msg: 'request completed', res: { statusCode: 404 } });
    expect(line.req.headers.authorization).toBe('[redacted]');
    expect(t.logs.join('\n')).not.toContain('super-secret-token-value');
  });

  it('writes exactly one completion line for each request, whatever its outcome', async () => {
    const token = await t.token();
    const run = randomBytes(4).toString('hex');
    const requests: [string, RequestInit & { path: string }, number][] = [
      ['ok', { path: '/api/webhooks', headers: { authorization: `Bearer ${token}` } }, 200],
      ['created', { path: '/oauth/token', method: 'POST', ...tokenRequest() }, 200],
      ['unknown', { path: '/no/such/route' }, 404],
      ['unauthorized', { path: '/api/webhooks' }, 401],
      [
        'invalid',
        {
          path: '/api/webhooks',
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: 'ftp://x' }),
        },
        400,
      ],
      [
        'malformed',
        {
          path: '/oauth/token',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"grant_type": ',
        },
        400,
      ],
      [
        'too-large',
        {
          path: '/oauth/token',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'x'.repeat(1024 * 1024 + 10) }),
        },
        413,
      ],
    ];
    const id = (name: string) => `one-line-${run}-${name}`;
    for (const [name, { path, headers, ...init }, status] of requests) {
      const res = await fetch(`${t.baseUrl}${path}`, {
        ...init,
        headers: { ...(headers as Record<string, string>), 'x-request-id': id(name) },
      });
      await res.arrayBuffer();
      expect([name, res.status, res.headers.get('x-request-id')]).toEqual([name, status, id(name)]);
    }
    // Lines are written as responses finish; a later request's line shows the earlier are in.
    await fetch(`${t.baseUrl}/no/such/sentinel`, { headers: { 'x-request-id': id('sentinel') } });
    await waitFor(() => completionLines(id('sentinel')).length > 0, { what: 'sentinel line' });
    for (const [name, , status] of requests) {
      const lines = completionLines(id(name));
      expect([name, lines.length]).toEqual([name, 1]);
      expect([name, lines[0].res.statusCode]).toEqual([name, status]);
    }
  });

  it('generates a request id when none (or a hostile one) is given', async () => {
    const res = await fetch(`${t.baseUrl}/health/live`, {
      headers: { 'x-request-id': 'bad id\twith tab' },
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('exposes Prometheus metrics counting requests by route', async () => {
    await fetch(`${t.baseUrl}/health/live`);
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(text).toMatch(
      /http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/,
    );
    expect(text).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toMatch(/queue_jobs\{queue="deliveries",state="waiting"\} 0/);
  });
});
