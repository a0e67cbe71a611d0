import { JOBS } from '../queue/queue.constants';

export interface DeliverJobData {
  deliveryId: string;
}

/**
 * The queue job of one delivery. Its job id is the delivery id, so Bull keeps at most one job
 * per delivery however often publish or the sweeper add it.
 */
export function deliverJob(deliveryId: string): {
  name: string;
  data: DeliverJobData;
  opts: { jobId: string };
} {
  return { name: JOBS.deliver, data: { deliveryId }, opts: { jobId: deliveryId } };
}
