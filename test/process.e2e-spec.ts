import { waitFor } from './support/wait-for';
import { createTestDatabase } from './support/test-db';
import { spawnApp } from './support/spawn-app';

describe('the process', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ DELIVERY_MAX_RETRIES: '-1' }, 'DELIVERY_MAX_RETRIES'],
    [{ AUTH_CLIENTS: '[{"client_id":' }, 'AUTH_CLIENTS'],
    [{ DATABASE_URL: 'nonsense' }, 'DATABASE_URL'],
    [{ NODE_ENV: 'production' }, 'AUTH_TOKEN_SECRET'],
    [{ NODE_ENV: 'production', AUTH_TOKEN_SECRET: 'p'.repeat(40) }, 'SECRETS_ENCRYPTION_KEY'],
  ])('stops at once with a non-zero exit for %j, naming %s', async (env, name) => {
    const app = spawnApp(env as Record<string, string>);
    const { code } = await app.exit;
    expect(code).toBe(1);
    expect(app.output()).toContain('Invalid configuration');
    expect(app.output()).toMatch(new RegExp(`- ${name} `));
  });

  it('drains and exits 0 on SIGTERM', async () => {
    const db = await createTestDatabase();
    const port = String(20000 + Math.floor(Math.random() * 20000));
    const app = spawnApp({
      PORT: port,
      DATABASE_URL: db.url,
      QUEUE_PREFIX: `mebtest:sigterm${port}`,
    });
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200,
        { timeoutMs: 30000, what: 'the spawned app to be ready' },
      );
      app.child.kill('SIGTERM');
      const { code, signal } = await app.exit;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(app.output()).toContain('drained: exiting');
      await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    } finally {
      app.child.kill('SIGKILL');
      await db.drop();
    }
  });
});
