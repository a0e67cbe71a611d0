import { createServer } from 'node:net';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SpawnedApp, freePort, spawnApp } from './support/spawn-app';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { TestDatabase, createTestDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';

/** Every line the process wrote, each parsed: a line that is not JSON fails the test. */
const jsonLines = (app: SpawnedApp): Record<string, unknown>[] =>
  app
    .output()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`a log line that is not JSON: ${line}`);
      }
    });

const messages = (app: SpawnedApp, level: number) =>
  jsonLines(app)
    .filter((l) => l.level === level)
    .map((l) => String(l.msg));

describe('start-up and dependency errors, as a newcomer meets them', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    await deleteRedisKeys('mebtest:startup-port');
    await deleteRedisKeys('mebtest:startup-redis');
  });

  it('names DATABASE_URL in JSON lines when PostgreSQL cannot be reached, and exits 1', async () => {
    const app = spawnApp({
      PORT: String(await freePort()),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`,
      REDIS_URL: TEST_REDIS_URL,
      LOG_LEVEL: 'warn',
    });
    const { code } = await app.exit;
    expect(code).toBe(1);
    const fatal = messages(app, 60);
    expect(fatal).toEqual([
      expect.stringMatching(
        /^Failed to start: PostgreSQL at 127\.0\.0\.1:\d+\/nowhere \(DATABASE_URL\) cannot be reached: connection refused\. Check DATABASE_URL/,
      ),
    ]);
  }, 60_000);

  it('says in one line that PORT is taken, naming it', async () => {
    const blocker = createServer();
    blocker.listen(0);
    await once(blocker, 'listening');
    const { port } = blocker.address() as AddressInfo;
    try {
      const app = spawnApp({
        PORT: String(port),
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        LOG_LEVEL: 'warn',
        QUEUE_PREFIX: `mebtest:startup-port`,
      });
      expect((await app.exit).code).toBe(1);
      expect(messages(app, 60)).toEqual([
        `Failed to start: PORT ${port} is already in use (another npm start or npm run tryout?): stop that process, or set PORT to a free port`,
      ]);
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('warns at start of no API client and of Redis away, and logs readiness once per change', async () => {
    const port = await freePort();
    const app = spawnApp({
      PORT: String(port),
      APP_ROLE: 'api',
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      LOG_LEVEL: 'info',
      QUEUE_PREFIX: `mebtest:startup-redis`,
    });
    try {
      await waitFor(() => messages(app, 40).some((m) => m.startsWith('Redis at')), {
        timeoutMs: 60_000,
        what: 'the Redis warning',
      });
      const warnings = messages(app, 40);
      expect(warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^No API client is configured \(AUTH_CLIENTS is empty\)/),
          expect.stringMatching(/^Redis at 127\.0\.0\.1:\d+ \(REDIS_URL\) does not answer/),
        ]),
      );
      for (let i = 0; i < 3; i++) {
        expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(503);
      }
      await waitFor(() => messages(app, 40).some((m) => m.startsWith('Not ready')), {
        what: 'the readiness line',
      });
      expect(messages(app, 40).filter((m) => m.startsWith('Not ready'))).toHaveLength(1);
      // No stack per probe: nothing at error level.
      expect(messages(app, 50)).toEqual([]);
    } finally {
      app.child.kill('SIGTERM');
      await app.exit;
    }
  }, 90_000);
});
