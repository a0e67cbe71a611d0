import type { Lane } from './lanes';
import type { ScheduledDelivery, SchedulerWork } from './scheduler-work';

/**
 * Spill and refill: a lane past `waitingPerWebhook` lets deliveries go (they stay pending in
 * PostgreSQL) and is marked spilled; once half drained it reads them back, oldest first, and
 * hands them to `submit`. A read that fails leaves it spilled: the next drain tries again.
 */
export function refill(
  lane: Lane,
  webhookId: string,
  waitingPerWebhook: number,
  work: Pick<SchedulerWork, 'refill'>,
  submit: (deliveries: ScheduledDelivery[]) => void,
): void {
  if (lane.refilling || lane.waiting.size > waitingPerWebhook / 2) return;
  lane.refilling = true;
  const limit = waitingPerWebhook - lane.waiting.size;
  work
    .refill(webhookId, limit, [...lane.waiting, ...lane.sending])
    .then(
      (ids) => {
        if (ids.length < limit) lane.spilled = false;
        submit(ids.map((id) => ({ id, webhookId })));
      },
      // Still spilled: the next round that drains it tries again.
      () => undefined,
    )
    .finally(() => (lane.refilling = false));
}
