import type { Job, Queue } from 'bull';
import { JobSpec } from './queue.constants';

/** What the queue holds under a job id, as far as re-queueing cares. */
export type QueueState = 'missing' | 'queued' | 'finished';

/** A job Bull has finished (completed or failed for good) has finishedOn set; one still waiting, delayed or active has not. */
export function queueStateOf(job: Pick<Job, 'finishedOn'> | null): QueueState {
  if (!job) return 'missing';
  return job.finishedOn ? 'finished' : 'queued';
}

export interface EnsuredJobs {
  /** Ids of the jobs this call added. */
  queued: string[];
  /** Finished jobs Bull would not remove (locked: a worker still holds them), with why. */
  notRemoved: { jobId: string; reason: string }[];
}

/**
 * Makes sure the queue holds a live job for each of `jobs`, for work that PostgreSQL says is
 * not done: adds those missing, replaces those Bull has finished with (a finished job under
 * the id would swallow the add), and leaves waiting, delayed and active ones alone. A finished
 * job Bull refuses to remove is skipped (an add under its id would be a no-op) and reported,
 * so `queued` names only what was really queued. Safe to race: Bull ignores an add whose id
 * exists, so concurrent callers queue the work once.
 */
export async function ensureJobs<T>(queue: Queue<T>, jobs: JobSpec<T>[]): Promise<EnsuredJobs> {
  const existing = await Promise.all(jobs.map((spec) => queue.getJob(spec.opts.jobId)));
  const notRemoved: EnsuredJobs['notRemoved'] = [];
  const adding = await Promise.all(
    jobs.map(async (spec, i) => {
      const job = existing[i];
      const state = queueStateOf(job);
      if (state === 'queued') return null;
      if (state === 'finished') {
        try {
          await job!.remove();
        } catch (error) {
          notRemoved.push({ jobId: spec.opts.jobId, reason: (error as Error).message });
          return null;
        }
      }
      return spec;
    }),
  );
  const queued = adding.filter((spec): spec is JobSpec<T> => spec !== null);
  if (queued.length > 0) await queue.addBulk(queued);
  return { queued: queued.map((spec) => spec.opts.jobId), notRemoved };
}
