import { connect } from 'node:net';
import { FakeZoom } from './support/fake-zoom';
import { waitFor } from './support/wait-for';
import { createTestDatabase } from './support/test-db';
import { freePort, spawnApp, spawnTestMs, waitUntilReady } from './support/spawn-app';
import { CLIENTS, TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { runNpmScript } from './support/npm-script';

/** Whether any process is left in the process group `pgid` (signal 0 only checks). */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
};

/** Whether a new TCP connection to the port is refused (not merely slow or reset). */
const refuses = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

describe('the process', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ DELIVERY_MAX_RETRIES: '-1' }, 'DELIVERY_MAX_RETRIES'],
    [{ AUTH_CLIENTS: '[{"client_id":' }, 'AUTH_CLIENTS'],
    [{ DATABASE_URL: 'nonsense' }, 'DATABASE_URL'],
    [{ NODE_ENV: 'production' }, 'AUTH_TOKEN_SECRET'],
    [{ NODE_ENV: 'production', AUTH_TOKEN_SECRET: 'p'.repeat(40) }, 'SECRETS_ENCRYPTION_KEY'],
  ])('stops at once with a non-zero exit for %j, naming %s in one JSON line', async (env, name) => {
    const app = spawnApp(env as Record<string, string>);
    const { code } = await app.exit;
    expect(code).toBe(1);
    // Like every line of the process (docs/operations.md), the refusal is JSON.
    const lines = app
      .output()
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        try {
          return JSON.parse(line) as { level: number; msg: string; problems: string[] };
        } catch {
          throw new Error(`a line that is not JSON: ${line}`);
        }
      });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 60,
        msg: expect.stringMatching(/^Invalid configuration: /) as unknown,
        problems: expect.arrayContaining([
          expect.stringMatching(new RegExp(`^${name} `)),
        ]) as unknown,
      }),
    ]);
  });

  it(
    'SIGTERM to npm start (npm alone, as a supervisor sends it) stops the server behind it',
    async () => {
      const db = await createTestDatabase();
      const port = await freePort();
      const npm = runNpmScript('start', [], {
        PORT: String(port),
        REDIS_URL: TEST_REDIS_URL,
        DATABASE_URL: db.url,
        QUEUE_PREFIX: `mebtest:npmstart${port}`,
      });
      const pgid = npm.child.pid as number;
      try {
        await waitUntilReady(`http://127.0.0.1:${port}`, 'npm start');
        // npm's shell used to die at once and leave node on the port with no parent.
        npm.child.kill('SIGTERM');
        await npm.exit;
        await waitFor(() => !groupAlive(pgid), {
          what: `every process of npm start gone; output:\n${npm.output()}`,
        });
        expect(npm.output()).toContain('drained: exiting');
        expect(await refuses(port)).toBe(true);
      } finally {
        if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
        await db.drop();
        await deleteRedisKeys(`mebtest:npmstart${port}`);
      }
    },
    spawnTestMs(),
  );

  it(
    'drains and exits 0 on SIGTERM',
    async () => {
      const db = await createTestDatabase();
      const port = String(await freePort());
      const app = spawnApp({
        PORT: port,
        REDIS_URL: TEST_REDIS_URL,
        DATABASE_URL: db.url,
        QUEUE_PREFIX: `mebtest:sigterm${port}`,
      });
      try {
        await waitUntilReady(`http://127.0.0.1:${port}`);
        app.child.kill('SIGTERM');
        const { code, signal } = await app.exit;
        expect({ code, signal }).toEqual({ code: 0, signal: null });
        expect(app.output()).toContain('drained: exiting');
        await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
      } finally {
        app.child.kill('SIGKILL');
        await db.drop();
      }
    },
    spawnTestMs(),
  );

  it(
    'on SIGTERM refuses new connections, answers the request in flight, then exits 0',
    async () => {
      const db = await createTestDatabase();
      const fake = await FakeZoom.start();
      const user = fake.addUser({ email: 'in-flight@example.com' });
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const app = spawnApp({
        APP_ROLE: 'api',
        PORT: String(port),
        DATABASE_URL: db.url,
        REDIS_URL: TEST_REDIS_URL,
        QUEUE_PREFIX: `mebtest:drain${port}`,
        AUTH_CLIENTS: JSON.stringify([CLIENTS.alpha]),
        SHUTDOWN_TIMEOUT_MS: '20000',
        ZOOM_TIMEOUT_MS: '30000',
        ...fake.env(),
      });
      try {
        await waitUntilReady(base);
        const token = await fetch(`${base}/oauth/token`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from(`${CLIENTS.alpha.client_id}:${CLIENTS.alpha.client_secret}`).toString('base64')}`,
          },
          body: new URLSearchParams({ grant_type: 'client_credentials' }),
        }).then(async (res) => ((await res.json()) as { access_token: string }).access_token);

        // The platform holds its answer, so the app's request stays in flight across the signal.
        fake.holdNext(1, (r) => r.apiPath === '/users');
        let settled = false;
        const inFlight = fetch(`${base}/api/users`, {
          headers: { authorization: `Bearer ${token}` },
        }).then(async (res) => {
          settled = true;
          return { status: res.status, body: (await res.json()) as { users: { email: string }[] } };
        });
        await waitFor(() => fake.heldCount === 1, { what: 'the app to call the platform' });

        app.child.kill('SIGTERM');
        await waitFor(() => refuses(port), { timeoutMs: 20000, what: 'new connections refused' });
        // Log lines are buffered for up to 100 ms (src/common/logging.ts).
        await waitFor(() => app.output().includes('SIGTERM received: draining'), {
          what: 'the draining line',
        });
        expect(settled).toBe(false);
        expect(app.child.exitCode).toBeNull();

        fake.releaseHeld();
        const answer = await inFlight;
        expect(answer.status).toBe(200);
        expect(answer.body.users.map((u) => u.email)).toContain(user.email);

        const { code, signal } = await app.exit;
        expect({ code, signal }).toEqual({ code: 0, signal: null });
        expect(app.output()).toContain('drained: exiting');
        expect(await refuses(port)).toBe(true);
      } finally {
        app.child.kill('SIGKILL');
        await fake.close();
        await db.drop();
      }
    },
    spawnTestMs(),
  );
});
