import { JobOptions } from 'bull';
import { AppConfig } from '../config/config.types';

/** Every queue and job name of the service. */
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
} as const;

/** Name of the custom backoff registered on the deliveries queue (see queue.module.ts). */
export const JITTERED_EXPONENTIAL = 'jittered-exponential';

/**
 * Retry and backoff defaults for every queue, in one place. A job's `attempts` counts the
 * first try, so N retries means N + 1 attempts.
 */
export function defaultJobOptions(config: AppConfig): Record<QueueName, JobOptions> {
  const keep = { removeOnComplete: 1000, removeOnFail: 5000 };
  return {
    [QUEUES.deliveries]: {
      attempts: config.delivery.maxRetries + 1,
      backoff: { type: JITTERED_EXPONENTIAL },
      ...keep,
    },
    [QUEUES.inbound]: { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, ...keep },
    [QUEUES.recordings]: {
      attempts: config.recordingAutomation.maxRetries + 1,
      backoff: { type: 'exponential', delay: config.recordingAutomation.backoffMs },
      ...keep,
    },
  };
}

/**
 * Delay before retry number `retry` (1-based): base * 2^(retry-1), with ±20% jitter so a
 * receiver that comes back is not hit by every retry at once.
 */
export function retryDelayMs(baseMs: number, retry: number, random = Math.random): number {
  const exact = baseMs * 2 ** Math.max(0, retry - 1);
  return Math.round(exact * (0.8 + 0.4 * random()));
}

/**
 * An error a processor throws when it has already chosen (and recorded) the delay before its
 * next attempt; the backoff strategy then uses that delay, so the queue and the record agree.
 */
export class RetryLaterError extends Error {
  constructor(
    message: string,
    readonly retryDelayMs: number,
  ) {
    super(message);
    this.name = 'RetryLaterError';
  }
}
