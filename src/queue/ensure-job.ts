import type { Queue } from 'bull';

/**
 * Makes sure the queue holds a live job under `jobId`, for work that PostgreSQL says is not
 * done: adds it when missing, replaces it when Bull has finished with it (completed or failed
 * for good: a finished job under the id would swallow the add), and leaves a waiting, delayed
 * or active job alone. Returns whether it queued anything (not when a finished job under the
 * id cannot be removed). Safe to race: Bull ignores an add
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
  if (job) {
    try {
      await job.remove();
    } catch {
      // Bull removes no locked job (a worker still holds it), and an add under its id would be
      // a no-op: nothing is queued now, and the caller's next sweep tries again.
      return false;
    }
  }
  await queue.add(name, data, { jobId });
  return true;
}
