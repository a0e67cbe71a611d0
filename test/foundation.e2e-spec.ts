import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { zoomHeaders } from '../scripts/platform/zoom-events';
import { Json, jsonOf, request } from './support/http';
import { CLIENTS, TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { sendZoomEvent } from './support/zoom-sender';
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

  /** The completion line of a finished request (it carries the response), by request id. */
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
    expect(body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'Request body is not valid JSON: Unexpected end of JSON input',
    });
    expect(JSON.stringify(body)).not.toMatch(/at .*\.js|node_modules/);
  });

  describe('bodies of the JSON routes (/api)', () => {
    let token: string;
    beforeAll(async () => {
      token = await t.token();
    });
    const webhookCount = async () =>
      Number((await t.app.get(DataSource).query('SELECT count(*) AS n FROM webhooks'))[0].n);

    it.each([
      ['cut short', '{"url": ', 'Unexpected end of JSON input'],
      ['not JSON at all', "{url: 'x'}", "Expected property name or '}' in JSON at position 1"],
    ])(
      'answers malformed JSON (%s) with 400 saying so, with the parser’s reason',
      async (_, body, reason) => {
        const before = await webhookCount();
        const res = await request(t.baseUrl, 'POST', '/api/webhooks', { token, body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message: expect.stringMatching(/^Request body is not valid JSON: /),
        });
        expect(res.body.message).toContain(reason);
        expect(await webhookCount()).toBe(before);
      },
    );

    it.each([
      [
        'a form',
        'application/x-www-form-urlencoded',
        'url=https%3A%2F%2F1.1.1.1%2F',
        '"application/x-www-form-urlencoded"',
      ],
      ['text', 'text/plain; charset=utf-8', '{"url":"https://1.1.1.1/"}', '"text/plain"'],
      ['no content type', '', '{"url":"https://1.1.1.1/"}', 'none was given'],
    ])(
      'answers %s with 415 asking for Content-Type: application/json',
      async (_, type, body, named) => {
        const before = await webhookCount();
        for (const [method, path] of [
          ['POST', '/api/webhooks'],
          ['PATCH', '/api/webhooks/00000000-0000-0000-0000-000000000000'],
          ['POST', '/api/users/someone/meetings'],
        ]) {
          const res = await request(t.baseUrl, method, path, {
            token,
            body,
            headers: { 'content-type': type },
          });
          expect([method, path, res.status]).toEqual([method, path, 415]);
          expect(res.body).toEqual({
            statusCode: 415,
            error: 'Unsupported Media Type',
            message: `Request body must be JSON: send Content-Type: application/json (${type ? `got ${named}` : named})`,
          });
        }
        expect(await webhookCount()).toBe(before);
      },
    );

    it('takes a JSON body with a charset, and a POST with no body at all', async () => {
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: JSON.stringify({ url: 'https://1.1.1.1/x', events: ['job.started'] }),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      // Read as JSON: the answer is about the missing secret, not the body's type.
      expect([res.status, res.body.details]).toEqual([
        400,
        [{ field: 'secret', message: 'secret is required' }],
      ]);
      const test = await request(
        t.baseUrl,
        'POST',
        '/api/webhooks/00000000-0000-0000-0000-000000000000/test',
        { token },
      );
      expect(test.status).toBe(404);
    });

    it('answers a body that does not match its Content-Encoding with 400, an unknown one with 415', async () => {
      const garbled = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: '{"url":"https://1.1.1.1/"}',
        headers: { 'content-encoding': 'gzip' },
      });
      expect(garbled.status).toBe(400);
      expect(garbled.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(garbled.body.message).toContain('Content-Encoding');
      const unknown = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: '{"url":"https://1.1.1.1/"}',
        headers: { 'content-encoding': 'x-squash' },
      });
      expect(unknown.status).toBe(415);
      expect(unknown.body.message).toContain('Content-Encoding x-squash is not supported');
    });

    it('still takes the form body of /oauth/token and the raw body of /zoom/events', async () => {
      // fetch sends URLSearchParams as application/x-www-form-urlencoded.
      const form = await fetch(`${t.baseUrl}/oauth/token`, { method: 'POST', ...tokenRequest() });
      expect(form.status).toBe(200);
      // The platform's signature covers the exact bytes, whatever content type they come with.
      const event = Buffer.from(
        JSON.stringify({
          event: 'endpoint.url_validation',
          event_ts: Date.now(),
          payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' },
        }),
      );
      const res = await sendZoomEvent(t.baseUrl, event, {
        headers: {
          ...zoomHeaders(ZOOM_SECRET_TOKEN, event),
          'content-type': 'application/x-www-form-urlencoded',
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.plainToken).toBe('qgg8vlvZRS6UYooatFL8Aw');
    });
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
