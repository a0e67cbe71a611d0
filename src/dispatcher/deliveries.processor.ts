import { InjectQueue } from '@nestjs/bull';
import { BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { OnJob } from '../queue/on-job.decorator';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverJobData, deliverJobs, deliveryIdsOf } from './delivery-job';
import { DeliverySlots } from './delivery-slots';
import { DeliveryStore, DeliveryTarget } from './delivery.store';
import { WebhookSlots } from './webhook-slots';

/** Jobs taken at once; each only claims deliveries, and DeliverySlots bounds the attempts. */
const JOB_CONCURRENCY = 6;
/** A job claims once this many slots are free (or all it still needs): fewer, larger claims. */
const CLAIM_AT_LEAST = 25;
/** A lease outlasts an attempt's deadline by this much: recording it, a busy event loop. */
const LEASE_MARGIN_MS = 5000;
/**
 * How long a delivery whose webhook is at its in-flight limit waits before it is claimed
 * again: short, since a webhook slot frees as soon as one attempt ends; jittered so the
 * waiting deliveries of one webhook do not all come back together.
 */
const DEFER_MS = 250;
const deferDelayMs = (): number => Math.round(DEFER_MS * (0.5 + Math.random()));

/**
 * Works the deliveries queue (worker role). A job carries several deliveries; as slots free
 * up (DELIVERY_CONCURRENCY requests in flight per process), the worker claims them in
 * PostgreSQL, which leases them to it, and starts their attempts (DeliveryAttemptService). The
 * job ends once its deliveries are claimed or found taken, final or gone; the attempts go on,
 * leased, so a worker that dies mid-attempt leaves them to the sweeper once the lease lapses.
 * A failed attempt with retries left is queued again as a job delayed by its backoff. At most
 * DELIVERY_CONCURRENCY_PER_WEBHOOK attempts go to one webhook at once (WebhookSlots, SPEC §9):
 * a claimed delivery beyond that gives its slot and lease back and is queued again shortly,
 * its attempt unspent, so a slow receiver cannot hold the slots other webhooks need.
 */
@Injectable()
export class DeliveriesProcessor implements BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly slots: DeliverySlots;
  private readonly leaseMs: number;
  /** Attempts started and not yet recorded, which shutdown waits for. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly attempts: DeliveryAttemptService,
    private readonly webhookSlots: WebhookSlots,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Pick<Queue, 'addBulk'>,
  ) {
    this.slots = new DeliverySlots(config.delivery.concurrency);
    this.leaseMs = config.delivery.timeoutMs + LEASE_MARGIN_MS;
  }

  @OnJob({
    queue: QUEUES.deliveries,
    job: JOBS.deliver,
    concurrency: JOB_CONCURRENCY,
    whenFinal: 'the sweeper re-queues its deliveries while they are pending',
  })
  async handle(job: Job<DeliverJobData>): Promise<void> {
    let ids = deliveryIdsOf(job.data);
    while (ids.length > 0) {
      if (this.closing) throw new Error('worker shutting down before the job was claimed');
      const taken = await this.slots.take(ids.length, CLAIM_AT_LEAST);
      const batch = ids.slice(0, taken);
      ids = ids.slice(taken);
      let claimed: DeliveryTarget[];
      try {
        claimed = await this.store.claim(batch, this.leaseMs);
      } catch (error) {
        this.slots.give(taken);
        throw error;
      }
      this.slots.give(taken - claimed.length);
      const deferred: string[] = [];
      for (const target of claimed) {
        // An inactive webhook's delivery is cancelled unsent, so it needs no webhook slot.
        const release = target.active
          ? this.webhookSlots.tryAcquire(target.webhookId)
          : () => undefined;
        if (release) {
          this.start(target, release);
        } else {
          this.slots.give();
          deferred.push(target.id);
        }
      }
      if (deferred.length > 0) await this.defer(deferred);
    }
  }

  /** Lets no job claim more, and waits for the attempts in flight to be recorded. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all(this.running);
  }

  private start(target: DeliveryTarget, releaseWebhookSlot: () => void): void {
    const running = this.attempts
      .attempt(target, () => {
        releaseWebhookSlot();
        this.slots.give();
      })
      .then(async (outcome) => {
        if (outcome.next === 'retry') await this.queueRetry(target.id, outcome.delayMs);
      })
      .catch((error: Error) =>
        this.logger.error(
          `delivery ${target.id}: ${error.message}; the attempt is not recorded: the sweeper ` +
            're-queues the delivery once its lease lapses',
        ),
      )
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }

  /** Deliveries whose webhook had no slot: unleased and queued again, delayed a little. */
  private async defer(deliveryIds: string[]): Promise<void> {
    await this.store.release(deliveryIds);
    // Should this fail, the job fails and is retried, or the sweeper queues them: unleased,
    // they are due.
    await this.queue.addBulk(deliverJobs(deliveryIds, deferDelayMs()));
  }

  private async queueRetry(deliveryId: string, delayMs: number): Promise<void> {
    try {
      await this.queue.addBulk(deliverJobs([deliveryId], delayMs));
    } catch (error) {
      // next_attempt_at is recorded: the sweeper queues the retry once it is overdue.
      this.logger.warn(
        `delivery ${deliveryId}: retry not queued (${(error as Error).message}); the sweeper will queue it`,
      );
    }
  }
}
