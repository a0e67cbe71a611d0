import { DataSource } from 'typeorm';
import { queryDatabase } from './support/test-db';
import { jsonOf, request } from './support/http';
import { apiRoutes, concretePath, routesOf } from './support/routes';
import { TestApp, startTestApp } from './support/test-app';

describe('readiness when a dependency is down', () => {
  it('answers 503 naming redis when REDIS_URL points at a closed port', async () => {
    // A prefix of its own: the app's Redis is a closed port, with no keys there to delete.
    const t = await startTestApp({
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
      queuePrefix: 'mebtest:closed-port',
    });
    try {
      const live = await fetch(`${t.baseUrl}/health/live`);
      expect(live.status).toBe(200);
      const res = await fetch(`${t.baseUrl}/health/ready`);
      expect(res.status).toBe(503);
      const body = await jsonOf(res);
      expect(body).toMatchObject({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'Not ready: redis unreachable',
      });
      expect(body.details).toEqual([{ field: 'redis', message: expect.any(String) }]);
    } finally {
      await t.close();
    }
  });

  it('answers 503 naming the database when PostgreSQL stops taking connections', async () => {
    const t = await startTestApp();
    const admin = t.database.url.replace(`/${t.database.name}`, '/postgres');
    try {
      await queryDatabase(admin, `ALTER DATABASE ${t.database.name} ALLOW_CONNECTIONS false`);
      await queryDatabase(
        admin,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`,
        [t.database.name],
      );
      const res = await fetch(`${t.baseUrl}/health/ready`);
      expect(res.status).toBe(503);
      const body = await jsonOf(res);
      expect(body.message).toBe('Not ready: database unreachable');
      expect(body.details.map((d: { field: string }) => d.field)).toEqual(['database']);
    } finally {
      await queryDatabase(admin, `ALTER DATABASE ${t.database.name} ALLOW_CONNECTIONS true`);
      await t.app
        .get(DataSource)
        .query('SELECT 1')
        .catch(() => undefined);
      await t.close();
    }
  });
});

describe('APP_ROLE=worker', () => {
  let t: TestApp;
  /** What an API process serves (health and metrics aside), from its own router. */
  let apiProcessRoutes: [string, string][];

  beforeAll(async () => {
    const api = await startTestApp({ env: { APP_ROLE: 'api' } });
    try {
      apiProcessRoutes = routesOf(api.app).filter(
        ([, path]) => !path.includes('*') && !/^\/(health|metrics)(\/|$)/.test(path),
      );
    } finally {
      await api.close();
    }
    t = await startTestApp({ env: { APP_ROLE: 'worker' } });
  });
  afterAll(() => t?.close());

  it('serves health and metrics', async () => {
    expect((await fetch(`${t.baseUrl}/health/ready`)).status).toBe(200);
    expect((await fetch(`${t.baseUrl}/metrics`)).status).toBe(200);
  });

  it('knows the routes it must not serve (this check is not vacuous)', () => {
    expect(apiProcessRoutes).toEqual(
      expect.arrayContaining([
        ['POST', '/api/webhooks'],
        ['DELETE', '/api/webhooks/:id'],
        ['POST', '/api/webhooks/:id/test'],
        ['GET', '/api/users'],
        ['POST', '/oauth/token'],
        ['POST', '/zoom/events'],
        ['GET', '/docs'],
        ['GET', '/docs-json'],
      ]),
    );
    expect(apiProcessRoutes.filter(([, path]) => path.startsWith('/api')).length).toBeGreaterThan(
      15,
    );
    expect(apiRoutes(t.app)).toEqual([]);
  });

  it('answers 404 in the error shape on every route an API process serves', async () => {
    for (const [method, route] of apiProcessRoutes) {
      const path = concretePath(route);
      const res = await request(t.baseUrl, method, path, method === 'GET' ? {} : { body: {} });
      expect([method, route, res.status, res.body]).toEqual([
        method,
        route,
        404,
        { statusCode: 404, error: 'Not Found', message: `Cannot ${method} ${path}` },
      ]);
    }
  });
});
