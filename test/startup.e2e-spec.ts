import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { runNpmScript } from './support/npm-script';
import { SpawnedApp, freePort, spawnApp, spawnTestMs, waitUntilReady } from './support/spawn-app';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { TestDatabase, createTestDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';

const execFileAsync = promisify(execFile);

/** Every line the process wrote, each parsed: a line that is not JSON fails the test. */
const jsonLines = (app: Pick<SpawnedApp, 'output'>): Record<string, unknown>[] =>
  parseLines(app.output());

const parseLines = (text: string): Record<string, unknown>[] =>
  text
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
    await deleteRedisKeys('mebtest:startup-npm');
  });

  it("npm start's prestart builds a missing console, in one JSON line, and leaves a fresh one", async () => {
    const out = mkdtempSync(join(tmpdir(), 'meb-console-'));
    const prestart = () =>
      execFileAsync(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', 'scripts/ensure-console.ts', out],
        { cwd: join(__dirname, '..') },
      );
    try {
      const first = await prestart();
      expect(parseLines(first.stdout + first.stderr)).toEqual([
        expect.objectContaining({
          level: 30,
          msg: expect.stringMatching(/^console built into .* in \d+ ms/) as unknown,
        }),
      ]);
      expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain('/console/assets/');
      const second = await prestart();
      expect(second.stdout + second.stderr).toBe('');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it(
    'npm start: a few JSON lines, the warning first, /console served, no line per favicon',
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      // As a newcomer runs it (npm's own banner aside: --silent): prestart, then the service.
      const npm = runNpmScript('start', [], {
        PORT: String(port),
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        QUEUE_PREFIX: 'mebtest:startup-npm',
      });
      try {
        await waitUntilReady(base, 'npm start');
        await waitFor(() => npm.output().includes('listening on'), {
          what: `the listening line; output so far:\n${npm.output()}`,
        });
        const lines = parseLines(npm.output());
        const ready = lines.findIndex((l) => String(l.msg).startsWith('listening on'));
        expect(ready + 1).toBeLessThanOrEqual(30);
        // What a person must read first comes first: before any other line of the service.
        const service = lines.filter((l) => l.role !== undefined);
        expect(service[0]).toMatchObject({
          level: 40,
          msg: expect.stringMatching(/^No API client is configured/) as unknown,
        });
        expect(lines.filter((l) => l.context === 'RouterExplorer')).toEqual([]);

        const page = await fetch(`${base}/console`);
        expect(page.status).toBe(200);
        const html = await page.text();
        expect(html).toContain('<div id="app">');
        // The console names its own icon, so a browser does not guess /favicon.ico.
        const icon = /<link rel="icon"[^>]* href="([^"]+)"/.exec(html)?.[1];
        expect((await fetch(`${base}${icon}`)).status).toBe(200);
        const before = npm.output().length;
        expect((await fetch(`${base}/favicon.ico`)).status).toBe(404);
        // A request's line is written when it finishes, at most 100 ms late: this one marks
        // that everything before it is out.
        await fetch(`${base}/console/?after-favicon`);
        await waitFor(() => npm.output().includes('after-favicon'), {
          what: 'the line of the request after /favicon.ico',
        });
        const after = parseLines(npm.output().slice(before));
        expect(after.filter((l) => JSON.stringify(l).includes('favicon.ico'))).toEqual([]);
        expect(after.filter((l) => Number(l.level) >= 40)).toEqual([]);
      } finally {
        await npm.stop();
      }
    },
    spawnTestMs(),
  );

  it(
    'names DATABASE_URL at once, then in one fatal line, when PostgreSQL cannot be reached, and exits 1',
    async () => {
      const app = spawnApp({
        PORT: String(await freePort()),
        DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nowhere`,
        REDIS_URL: TEST_REDIS_URL,
        LOG_LEVEL: 'warn',
      });
      const { code } = await app.exit;
      expect(code).toBe(1);
      // Two lines, not TypeORM's retries and Nest's report each with a stack before it: at once,
      // before the app loads, that it waits; then why the start failed. (The warning of no API
      // client aside, said first.)
      const lines = jsonLines(app).filter((l) => !String(l.msg).startsWith('No API client'));
      expect(lines.map((l) => [l.level, l.msg])).toEqual([
        [
          40,
          expect.stringMatching(
            /^PostgreSQL at 127\.0\.0\.1:\d+\/nowhere \(DATABASE_URL\) does not answer: connection refused\. Waiting for it \(5 tries 2 s apart, about 10 s\), then the start fails/,
          ),
        ],
        [
          60,
          expect.stringMatching(
            /^Failed to start: PostgreSQL at 127\.0\.0\.1:\d+\/nowhere \(DATABASE_URL\) cannot be reached: connection refused\. Check DATABASE_URL/,
          ),
        ],
      ]);
    },
    spawnTestMs(),
  );

  it(
    'says in one line that PORT is taken, naming it',
    async () => {
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
    },
    spawnTestMs(),
  );

  it('says at once, before the app loads, that Redis at REDIS_URL does not answer (no password), starts anyway, and logs readiness once per change', async () => {
    const port = await freePort();
    const app = spawnApp({
      PORT: String(port),
      // Role all: the worker's own Redis connections (the freed-slot subscriber) too.
      DATABASE_URL: database.url,
      REDIS_URL: `redis://:startup-redis-password@127.0.0.1:${await freePort()}/0`,
      LOG_LEVEL: 'debug',
      QUEUE_PREFIX: `mebtest:startup-redis`,
    });
    try {
      await waitFor(() => messages(app, 40).some((m) => m.startsWith('Redis at')), {
        timeoutMs: 60_000,
        what: 'the Redis warning',
      });
      // Written before the app loads: no line of Nest's start (debug) comes before it.
      const first = jsonLines(app).slice(0, 2);
      expect(first.map((l) => l.msg)).toEqual([
        expect.stringMatching(/^No API client is configured \(AUTH_CLIENTS is empty\)/),
        expect.stringMatching(
          /^Redis at 127\.0\.0\.1:\d+\/0 \(REDIS_URL\) does not answer: connection refused\. Starting without it: until it answers, \/health\/ready answers 503 and queued work waits/,
        ),
      ]);
      await waitFor(() => messages(app, 30).some((m) => m.startsWith('listening on')), {
        timeoutMs: 60_000,
        what: 'the service to listen without Redis',
      });
      // Said once, not again after listening; the password never.
      expect(messages(app, 40).filter((m) => m.startsWith('Redis at'))).toHaveLength(1);
      expect(app.output()).not.toContain('startup-redis-password');
      for (let i = 0; i < 3; i++) {
        expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(503);
      }
      await waitFor(() => messages(app, 40).some((m) => m.startsWith('Not ready')), {
        what: 'the readiness line',
      });
      expect(messages(app, 40).filter((m) => m.startsWith('Not ready'))).toHaveLength(1);
      // No stack per probe: nothing at error level.
      expect(messages(app, 50)).toEqual([]);
      // ioredis's connection errors are lines of the log, not plain text beside it.
      await waitFor(() => messages(app, 20).some((m) => m.startsWith('freed-slot notices wait')), {
        what: "the subscriber's line on Redis away",
      });
      expect(app.output()).not.toContain('[ioredis]');
    } finally {
      app.child.kill('SIGTERM');
      await app.exit;
    }
  }, 90_000);
});
