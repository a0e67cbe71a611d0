import type { Job } from 'bull';

/** Whether this run of the job is its last (Bull counts the first try among `attempts`). */
export function isFinalAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** "attempt 2/4", for the log lines that say whether a failure will be retried. */
export function attemptLabel(job: Job): string {
  return `attempt ${job.attemptsMade + 1}/${job.opts.attempts ?? 1}`;
}
