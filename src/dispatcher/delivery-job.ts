import { JOBS, JobSpec, recordJob } from '../queue/queue.constants';

export interface DeliverJobData {
  deliveryId: string;
}

/** The queue job of one delivery, under the delivery's id. */
export function deliverJob(deliveryId: string): JobSpec<DeliverJobData> {
  return recordJob(JOBS.deliver, deliveryId, { deliveryId });
}
