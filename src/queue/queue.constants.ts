import type { JobOptions, QueueOptions } from 'bull';
import { AppConfig } from '../config/config.types';
import { keyGroup } from '../redis/redis-keys';

/**
 * Every queue and job of the service, and the one place for their retry policy and default
 * job options: attempts, backoff, job ids, how many finished jobs Redis keeps, and the errors
 * through which a handler picks its next delay or ends its retries.
 */
export const QUEUES = {
  deliveries: 'deliveries',
  inbound: 'inbound',
  recordings: 'recordings',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const JOBS = {
  deliver: 'deliver',
  processInbound: 'process-inbound',
  recordingAutomation: 'recording-automation',
  computeAttendance: 'compute-attendance',
} as const;
export type JobName = (typeof JOBS)[keyof typeof JOBS];

/**
 * The queue each job runs on. A worker process refuses to start unless every job here has
 * exactly one @OnJob handler, on this queue.
 */
export const JOB_QUEUES: Record<JobName, QueueName> = {
  [JOBS.deliver]: QUEUES.deliveries,
  [JOBS.processInbound]: QUEUES.inbound,
  [JOBS.recordingAutomation]: QUEUES.recordings,
  // Derived from stored inbound events, and as short: one occurrence's reads and a publish.
  [JOBS.computeAttendance]: QUEUES.inbound,
};

/** A job as Bull's add and addBulk take it, always under a job id. */
export interface JobSpec<T> {
  name: JobName;
  data: T;
  opts: JobOptions & { jobId: string };
}

/**
 * The job for work recorded in PostgreSQL under `recordId`. The job id is the record's id, so
 * Bull holds at most one job per record however often the API, a processor or a sweeper adds
 * it (Bull ignores an add whose id exists).
 */
export function recordJob<T>(name: JobName, recordId: string, data: T): JobSpec<T> {
  return { name, data, opts: { jobId: recordId } };
}

/** Name of the custom backoff registered on every queue (see queueOptions). */
export const JITTERED_EXPONENTIAL = 'jittered-exponential';

/** Finished jobs Redis keeps for the dashboard; PostgreSQL holds the record of the work. */
const KEEP_FINISHED = { removeOnComplete: 1000, removeOnFail: 5000 };

/** Inbound jobs are short queries and a publish: a few quick retries cover a database blip. */
const INBOUND_ATTEMPTS = 5;
const INBOUND_BACKOFF_MS = 1000;

/**
 * Delay before retry number `retry` (1-based): base * 2^(retry-1), with ±20% jitter so a
 * receiver that comes back is not hit by every retry at once.
 */
export function retryDelayMs(baseMs: number, retry: number, random = Math.random): number {
  const exact = baseMs * 2 ** Math.max(0, retry - 1);
  return Math.round(exact * (0.8 + 0.4 * random()));
}

/**
 * Deliveries: the first attempt and DELIVERY_MAX_RETRIES retries, DELIVERY_BACKOFF_MS apart and
 * doubling, jittered. DeliveryAttemptService compares PostgreSQL's attempt count to `attempts`
 * and records the delay it picks; the retry is a job delayed by it. A deliveries job itself
 * fails only when its deliveries cannot be claimed (database down), and is retried on the
 * same backoff.
 */
export function deliveryRetry(config: AppConfig): {
  attempts: number;
  delayMs: (retry: number) => number;
} {
  return {
    attempts: config.delivery.maxRetries + 1,
    delayMs: (retry) => retryDelayMs(config.delivery.backoffMs, retry),
  };
}

/**
 * Default options of every queue's jobs. A job's `attempts` counts the first try, so N retries
 * means N + 1 attempts.
 */
export function defaultJobOptions(config: AppConfig): Record<QueueName, JobOptions> {
  return {
    [QUEUES.deliveries]: {
      attempts: deliveryRetry(config).attempts,
      backoff: { type: JITTERED_EXPONENTIAL },
      ...KEEP_FINISHED,
    },
    [QUEUES.inbound]: {
      attempts: INBOUND_ATTEMPTS,
      backoff: { type: 'exponential', delay: INBOUND_BACKOFF_MS },
      ...KEEP_FINISHED,
    },
    [QUEUES.recordings]: {
      attempts: config.recordingAutomation.maxRetries + 1,
      backoff: { type: 'exponential', delay: config.recordingAutomation.backoffMs },
      ...KEEP_FINISHED,
    },
  };
}

/**
 * Bull's options for queue `name`: its keys' prefix, its default job options and the custom
 * backoff. Bull's scripts touch many keys of one queue, so each queue's keys share a hash tag
 * of their own (`{meb:deliveries}:deliveries:wait`): on a Cluster a queue lives on one node,
 * and the queues spread over the nodes (docs/operations.md#redis-keys).
 */
export function queueOptions(config: AppConfig, name: QueueName): QueueOptions {
  const delivery = deliveryRetry(config);
  return {
    prefix: keyGroup(config.redis.prefix, name),
    defaultJobOptions: defaultJobOptions(config)[name],
    settings: {
      backoffStrategies: {
        [JITTERED_EXPONENTIAL]: (attemptsMade: number) => delivery.delayMs(attemptsMade),
      },
    },
  };
}
