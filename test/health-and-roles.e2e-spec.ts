import { DataSource } from 'typeorm';
import { queryDatabase } from './support/test-db';
import { jsonOf } from './support/http';
import { TestApp, startTestApp } from './support/test-app';

describe('readiness when a dependency is down', () => {
  it('answers 503 naming redis when REDIS_URL points at a closed port', async () => {
    const t = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
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
  beforeAll(async () => {
    t = await startTestApp({ env: { APP_ROLE: 'worker' } });
  });
  afterAll(() => t.close());

  it('serves health and metrics', async () => {
    expect((await fetch(`${t.baseUrl}/health/ready`)).status).toBe(200);
    expect((await fetch(`${t.baseUrl}/metrics`)).status).toBe(200);
  });

  it.each([
    ['GET', '/api/webhooks'],
    ['POST', '/api/webhooks'],
    ['POST', '/oauth/token'],
    ['POST', '/zoom/events'],
    ['GET', '/api/users'],
    ['GET', '/docs'],
    ['GET', '/docs-json'],
  ])('serves no %s %s', async (method, path) => {
    const res = await fetch(`${t.baseUrl}${path}`, { method });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).statusCode).toBe(404);
  });
});
