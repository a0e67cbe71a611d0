import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { RenewalLock } from './renewal-lock';
import { waitFor } from '../../test/support/wait-for';

// Against the real Redis of the test environment: the lock's whole point is Redis's NX and the
// script's compare-and-delete, which a mock would only restate.
const REDIS_URL = 'redis://127.0.0.1:6379';

describe('RenewalLock', () => {
  let redis: Redis;
  let prefix: string;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    prefix = `meblock:${randomBytes(4).toString('hex')}`;
  });

  afterEach(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('lets one holder per account take it, and another account apart', async () => {
    const a = new RenewalLock(redis, prefix, 10_000);
    const b = new RenewalLock(redis, prefix, 10_000);
    const taken = await Promise.all([a.tryTake('acct-1'), b.tryTake('acct-1')]);
    expect(taken.filter((l) => l !== null)).toHaveLength(1);
    expect(await a.tryTake('acct-2')).not.toBeNull();
    expect(await a.held('acct-1')).toBe(true);
  });

  it('frees on release, for the next holder', async () => {
    const lock = new RenewalLock(redis, prefix, 10_000);
    const held = await lock.tryTake('acct');
    await held?.release();
    expect(await lock.held('acct')).toBe(false);
    expect(await lock.tryTake('acct')).not.toBeNull();
  });

  it('frees by itself when its holder dies, and a late release leaves the new holder alone', async () => {
    const lock = new RenewalLock(redis, prefix, 200);
    const dead = await lock.tryTake('acct');
    await waitFor(async () => !(await lock.held('acct')), { what: 'the lock to expire' });
    const next = new RenewalLock(redis, prefix, 10_000);
    expect(await next.tryTake('acct')).not.toBeNull();
    await dead?.release();
    expect(await lock.held('acct')).toBe(true);
  });
});
