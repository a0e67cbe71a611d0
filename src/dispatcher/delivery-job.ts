import type { JobOptions } from 'bull';
import { JOBS, JobName } from '../queue/queue.constants';

export interface DeliverJobData {
  deliveryIds: string[];
}

/** Most deliveries one job carries: its worker claims them in one statement. */
export const DELIVERIES_PER_JOB = 50;

export interface DeliverJob {
  name: JobName;
  data: DeliverJobData;
  opts: JobOptions;
}

/**
 * The queue jobs that carry `deliveryIds` to a worker, DELIVERIES_PER_JOB at most each, due
 * after `delayMs`. They have no job ids of their own: a delivery queued twice is claimed
 * (DeliveryStore.claim) by one job only, and the other finds nothing to send.
 */
export function deliverJobs(deliveryIds: string[], delayMs = 0): DeliverJob[] {
  const jobs: DeliverJob[] = [];
  for (let i = 0; i < deliveryIds.length; i += DELIVERIES_PER_JOB) {
    jobs.push({
      name: JOBS.deliver,
      data: { deliveryIds: deliveryIds.slice(i, i + DELIVERIES_PER_JOB) },
      opts: delayMs > 0 ? { delay: delayMs } : {},
    });
  }
  return jobs;
}

/** The deliveries of a job, also of one queued before jobs carried several (`deliveryId`). */
export function deliveryIdsOf(data: DeliverJobData | { deliveryId: string }): string[] {
  return 'deliveryIds' in data ? data.deliveryIds : [data.deliveryId];
}
