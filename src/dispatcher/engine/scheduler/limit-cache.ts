import type { WebhookLimit } from '../../../delivery-record/delivery.store';
import type { SchedulerWork } from './scheduler-work';

/** How long a webhook's limits are used before they are read again (a PATCH takes this long). */
export const LIMITS_TTL_MS = 5000;

/** The webhooks' limits (docs/api.md#receiver-health) as the scheduler last read them. */
export class LimitCache {
  private readonly cache = new Map<string, { limit: WebhookLimit; at: number }>();
  private loading = false;

  constructor(
    private readonly work: Pick<SchedulerWork, 'limits'>,
    private readonly defaults: WebhookLimit,
  ) {}

  /** The webhook's limits and when they were read; undefined before the first read. */
  entry(webhookId: string): { limit: WebhookLimit; at: number } | undefined {
    return this.cache.get(webhookId);
  }

  limit(webhookId: string): WebhookLimit | undefined {
    return this.cache.get(webhookId)?.limit;
  }

  /**
   * Reads the limits of `webhookIds`, unless a read is under way. The webhooks `keep` declines
   * (no longer scheduled) are forgotten, so a deleted one leaves nothing; `failed` hears of a
   * read that failed, `settled` of the end of every read.
   */
  load(
    webhookIds: string[],
    keep: (webhookId: string) => boolean,
    failed: (error: Error) => void,
    settled: () => void,
  ): void {
    if (this.loading) return;
    this.loading = true;
    this.work
      .limits(webhookIds)
      .then((found) => {
        const at = Date.now();
        for (const id of webhookIds)
          this.cache.set(id, { limit: found.get(id) ?? this.defaults, at });
        for (const id of this.cache.keys()) if (!keep(id)) this.cache.delete(id);
      }, failed)
      .finally(() => {
        this.loading = false;
        settled();
      });
  }
}
