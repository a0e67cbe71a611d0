import type { LoggerService } from '@nestjs/common';
import type { Job } from 'bull';
import { attemptLabel, isFinalAttempt } from './attempts';

export interface JobRunnerOptions {
  /** What becomes of the work once its job fails for good ("the sweeper queues it again"). */
  whenFinal?: string;
  /** Runs once the job has failed for good, before Bull marks it failed. */
  onFinalFailure?: (job: Job, error: Error) => Promise<void>;
}

/**
 * Wraps a job handler so that every failure is logged once, by one rule: whether Bull retries
 * the job ("attempt 2/4: …; will retry") or it is final ("attempt 4/4: …; final …").
 */
export function jobRunner<T>(
  handler: (job: Job<T>) => Promise<unknown>,
  options: JobRunnerOptions,
  logger: LoggerService,
): (job: Job<T>) => Promise<unknown> {
  return async (job) => {
    try {
      return await handler(job);
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      const what = `${job.name} job ${job.id}, ${attemptLabel(job)}: ${error.message}`;
      if (!isFinalAttempt(job)) {
        logger.warn(`${what}; will retry`);
        throw error;
      }
      logger.error(`${what}; ${finalNote(options)}`);
      await runFinalHook(job, error, options, logger);
      throw error;
    }
  };
}

function finalNote(options: JobRunnerOptions): string {
  return `final for this job${options.whenFinal ? `; ${options.whenFinal}` : ''}`;
}

async function runFinalHook(
  job: Job,
  error: Error,
  options: JobRunnerOptions,
  logger: LoggerService,
): Promise<void> {
  if (!options.onFinalFailure) return;
  try {
    await options.onFinalFailure(job, error);
  } catch (hookError) {
    // The job fails either way; the hook's own failure must not hide the job's error.
    logger.error(
      `${job.name} job ${job.id}: handling its final failure failed too: ` +
        `${hookError instanceof Error ? hookError.message : String(hookError)}`,
    );
  }
}
