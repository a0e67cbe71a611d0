import type { JobOptions } from 'bull';
import { JOBS, JobName } from '../../queue/queue.constants';
import type { DeliveryRef } from '../../delivery-record/delivery.store';

export interface DeliverJobData {
  deliveryIds: string[];
  /**
   * The webhook of each delivery, in the same order, so the worker can put them in their lanes
   * without asking PostgreSQL.
   */
  webhookIds: string[];
}

/** Most deliveries one job carries: its worker claims them in one statement. */
export const DELIVERIES_PER_JOB = 50;

export interface DeliverJob {
  name: JobName;
  data: DeliverJobData;
  opts: JobOptions;
}

/**
 * The queue jobs that carry `deliveries` to a worker, DELIVERIES_PER_JOB at most each, due
 * after `delayMs`. They have no job ids of their own: a delivery queued twice is claimed
 * (DeliveryStore.claim) by one job only, and the other finds nothing to send.
 */
export function deliverJobs(deliveries: DeliveryRef[], delayMs = 0): DeliverJob[] {
  const jobs: DeliverJob[] = [];
  for (let i = 0; i < deliveries.length; i += DELIVERIES_PER_JOB) {
    const part = deliveries.slice(i, i + DELIVERIES_PER_JOB);
    jobs.push({
      name: JOBS.deliver,
      data: { deliveryIds: part.map((d) => d.id), webhookIds: part.map((d) => d.webhookId) },
      opts: delayMs > 0 ? { delay: delayMs } : {},
    });
  }
  return jobs;
}

/** The deliveries of a job with their webhooks. */
export function jobDeliveryRefs({ deliveryIds, webhookIds }: DeliverJobData): DeliveryRef[] {
  return deliveryIds.map((id, i) => ({ id, webhookId: webhookIds[i] }));
}
