import { SetMetadata } from '@nestjs/common';
import type { Job } from 'bull';
import { AppConfig } from '../config/config.types';
import { JobName, QueueName } from './queue.constants';

export const ON_JOB = 'meeting-event-bridge:on-job';

export interface OnJobOptions<T extends object = object> {
  queue: QueueName;
  job: JobName;
  /** Jobs this process works at once; a function when configuration sets it. */
  concurrency: number | ((config: AppConfig) => number);
  /** What becomes of the work once its job fails for good, for that failure's log line. */
  whenFinal?: string;
  /**
   * Runs once the job has failed for good (to record the error, say), before Bull marks it
   * failed; it gets the handler's own instance.
   */
  onFinalFailure?: (handler: T, job: Job, error: Error) => Promise<void>;
}

/**
 * Declares the method it decorates as the handler of `job` on `queue`. Worker processes find
 * every handler at boot (JobHandlers) and refuse to start when a job of JOBS has none or two.
 */
export function OnJob<T extends object>(
  options: OnJobOptions<T>,
): <M extends JobMethod>(
  target: T,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void {
  return SetMetadata(ON_JOB, options);
}

/** A handler method: it takes the job (Bull's data is untyped) and settles when the work is done. */
export type JobMethod = (job: Job) => Promise<unknown>;
