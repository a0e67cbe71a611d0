import { randomBytes } from 'node:crypto';
import Bull from 'bull';
import { ensureJobs } from '../src/queue/ensure-job';
import { JOBS, recordJob } from '../src/queue/queue.constants';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { waitFor } from './support/wait-for';

interface Data {
  n: number;
}
// Job ids are Redis key suffixes: none may be one of Bull's own (wait, delayed, active...).
const job = (id: string, n: number) => recordJob<Data>(JOBS.deliver, id, { n });

describe('ensureJobs against a real Bull queue', () => {
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;
  const worked = new Bull<Data>('ensure', TEST_REDIS_URL, { prefix });
  // Nothing works this one: its jobs stay waiting or delayed.
  const idle = new Bull<Data>('ensure-idle', TEST_REDIS_URL, { prefix });
  const processed: string[] = [];
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  beforeAll(() => {
    void worked.process(JOBS.deliver, 5, async (job) => {
      if (job.id === 'h1') await held;
      processed.push(String(job.id));
    });
  });
  afterAll(async () => {
    release();
    await Promise.all([worked.close(), idle.close()]);
    await deleteRedisKeys(prefix);
  });
  const timesProcessed = (id: string) => processed.filter((p) => p === id).length;

  it('adds missing jobs once, however many callers race', async () => {
    const results = await Promise.all(
      [1, 2, 3].map(() => ensureJobs(worked, [job('a', 1), job('b', 1)])),
    );
    expect(results.some((r) => r.queued.includes('a') && r.queued.includes('b'))).toBe(true);
    await waitFor(() => timesProcessed('a') === 1 && timesProcessed('b') === 1, {
      what: 'jobs a and b processed',
    });
    await waitFor(async () => (await worked.getJob('b'))?.finishedOn, { what: 'job b finished' });
    expect([timesProcessed('a'), timesProcessed('b')]).toEqual([1, 1]);
  });

  it('replaces finished jobs, so the work runs again', async () => {
    await waitFor(async () => (await worked.getJob('a'))?.finishedOn, { what: 'job a finished' });
    expect(await ensureJobs(worked, [job('a', 2)])).toEqual({ queued: ['a'], notRemoved: [] });
    await waitFor(() => timesProcessed('a') === 2, { what: 'job a processed again' });
  });

  it('leaves waiting, delayed and active jobs alone and reports only what it queued', async () => {
    await idle.add(JOBS.deliver, { n: 1 }, { jobId: 'w1' });
    await idle.add(JOBS.deliver, { n: 1 }, { jobId: 'd1', delay: 600000 });
    await worked.add(JOBS.deliver, { n: 1 }, { jobId: 'h1' });
    await waitFor(async () => (await worked.getJob('h1'))?.isActive(), { what: 'h1 active' });

    expect(await ensureJobs(idle, [job('w1', 2), job('d1', 2), job('new', 2)])).toEqual({
      queued: ['new'],
      notRemoved: [],
    });
    expect(await ensureJobs(worked, [job('h1', 2)])).toEqual({ queued: [], notRemoved: [] });

    expect((await idle.getJob('w1'))?.data).toEqual({ n: 1 });
    expect(await (await idle.getJob('d1'))?.isDelayed()).toBe(true);
    expect((await idle.getJob('d1'))?.data).toEqual({ n: 1 });
    expect((await idle.getJob('new'))?.data).toEqual({ n: 2 });
    release();
    await waitFor(() => timesProcessed('h1') === 1, { what: 'h1 processed' });
  });

  it('skips a finished job Bull will not remove (locked), and still queues the rest', async () => {
    await waitFor(async () => (await worked.getJob('a'))?.finishedOn, { what: 'job a finished' });
    await waitFor(async () => (await worked.getJob('b'))?.finishedOn, { what: 'job b finished' });
    const lockKey = `${prefix}:ensure:a:lock`;
    await worked.client.set(lockKey, 'another-worker', 'PX', 60000);
    try {
      expect(await ensureJobs(worked, [job('a', 3), job('b', 3)])).toEqual({
        queued: ['b'],
        notRemoved: [{ jobId: 'a', reason: 'Could not remove job a' }],
      });
      expect((await worked.getJob('a'))?.data).toEqual({ n: 2 });
    } finally {
      await worked.client.del(lockKey);
    }
    await waitFor(() => timesProcessed('b') === 2, { what: 'job b processed again' });
    expect(await ensureJobs(worked, [job('a', 3)])).toEqual({ queued: ['a'], notRemoved: [] });
    await waitFor(() => timesProcessed('a') === 3, { what: 'job a processed a third time' });
  });
});
