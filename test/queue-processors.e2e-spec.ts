import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Json } from './support/http';
import { TEST_REDIS_URL, TestApp, deleteRedisKeys, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

const PROCESSORS = ['deliveries', 'inbound', 'recordings'];

describe('queue processors that cannot start', () => {
  const suffix = randomBytes(4).toString('hex');
  const user = `mebtest-nopubsub-${suffix}`;
  const password = randomBytes(16).toString('hex');
  const prefix = `mebtest:nopubsub${suffix}`;
  let admin: Redis;
  let t: TestApp;

  beforeAll(async () => {
    admin = new Redis(TEST_REDIS_URL);
    // A real misconfiguration: a Redis user with every command on this run's keys but no
    // Pub/Sub channel (what Redis 7 gives a new user by default). Bull connects and PING
    // answers, but the subscription a processor starts with is refused (NOPERM), so Bull's
    // process() rejects.
    await admin.call(
      'ACL',
      'SETUSER',
      user,
      'reset',
      'on',
      `>${password}`,
      `~${prefix}:*`,
      `~{${prefix}:*`,
      'resetchannels',
      '+@all',
    );
    const url = new URL(TEST_REDIS_URL);
    url.username = user;
    url.password = password;
    t = await startTestApp({ env: { REDIS_URL: url.toString() }, queuePrefix: prefix });
  });
  afterAll(async () => {
    await t?.close();
    await admin.call('ACL', 'DELUSER', user);
    await deleteRedisKeys(prefix);
    admin.disconnect();
  });

  it('reports not ready, naming each stopped processor, and says it takes no more jobs', async () => {
    const body = await waitFor(
      async () => {
        const res = await fetch(`${t.baseUrl}/health/ready`);
        return res.status === 503 && ((await res.json()) as Json);
      },
      { what: 'readiness to report the stopped processors' },
    );
    expect(body).toMatchObject({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'Not ready: queue processors stopped',
    });
    expect(body.details).toEqual([{ field: 'processors', message: expect.any(String) }]);
    for (const queue of PROCESSORS) {
      expect(body.details[0].message).toMatch(new RegExp(`${queue} processor stopped: .*NOPERM`));
      expect(
        t.logs.some(
          (l) =>
            l.includes(`${queue} processor stopped`) &&
            l.includes('NOPERM') &&
            l.includes('final: this process takes no more jobs from the queue until restarted'),
        ),
      ).toBe(true);
    }
    // Still alive: a restart is what brings the processors back.
    expect((await fetch(`${t.baseUrl}/health/live`)).status).toBe(200);
  });
});
