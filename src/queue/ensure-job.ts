import type { Queue } from 'bull';

/**
 * Makes sure the queue holds a live job under `jobId`, for work that PostgreSQL says is not
 * done: adds it when missing, replaces it when Bull has finished with it (completed or failed
 * for good: a finished job under the id would swallow the add), and leaves a waiting, delayed
 * or active job alone. Returns whether it queued anything. Safe to race: Bull ignores an add
 * whose id already exists, so concurrent callers queue the work once.
 */
export async function ensureJob<T>(
  queue: Queue<T>,
  name: string,
  data: T,
  jobId: string,
): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (job && !job.finishedOn) return false;
  // A job another worker holds cannot be removed; the add below is then a no-op.
  if (job) await job.remove().catch(() => undefined);
  await queue.add(name, data, { jobId });
  return true;
}
