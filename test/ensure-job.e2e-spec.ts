import { randomBytes } from 'node:crypto';
import Bull from 'bull';
import { ensureJob } from '../src/queue/ensure-job';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { waitFor } from './support/wait-for';

describe('ensureJob against a real Bull queue', () => {
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;
  const queue = new Bull<{ n: number }>('ensure', TEST_REDIS_URL, { prefix });
  const processed: string[] = [];
  beforeAll(() => {
    void queue.process('x', async (job) => {
      processed.push(String(job.id));
    });
  });
  afterAll(async () => {
    await queue.close();
    await deleteRedisKeys(prefix);
  });

  it('adds a missing job once, however many callers race', async () => {
    const results = await Promise.all([1, 2, 3].map(() => ensureJob(queue, 'x', { n: 1 }, 'a')));
    expect(results.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    await waitFor(() => processed.includes('a'), { what: 'job a processed' });
    expect(processed.filter((id) => id === 'a')).toEqual(['a']);
  });

  it('replaces a finished job, so the work runs again', async () => {
    await waitFor(async () => (await queue.getJob('a'))?.finishedOn, { what: 'job a finished' });
    expect(await ensureJob(queue, 'x', { n: 2 }, 'a')).toBe(true);
    await waitFor(() => processed.filter((id) => id === 'a').length === 2, {
      what: 'job a processed again',
    });
  });

  it('queues nothing and says so while a finished job it cannot remove is locked', async () => {
    await waitFor(async () => (await queue.getJob('a'))?.finishedOn, { what: 'job a finished' });
    const lockKey = `${prefix}:ensure:a:lock`;
    await queue.client.set(lockKey, 'another-worker', 'PX', 60000);
    try {
      expect(await ensureJob(queue, 'x', { n: 3 }, 'a')).toBe(false);
      expect((await queue.getJob('a'))?.data).toEqual({ n: 2 });
    } finally {
      await queue.client.del(lockKey);
    }
    expect(await ensureJob(queue, 'x', { n: 3 }, 'a')).toBe(true);
    await waitFor(() => processed.filter((id) => id === 'a').length === 3, {
      what: 'job a processed a third time',
    });
  });
});
