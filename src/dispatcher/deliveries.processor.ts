import { InjectQueue } from '@nestjs/bull';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnModuleInit,
} from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { OnJob } from '../queue/on-job.decorator';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverJobData, deliverJobs, routesOf } from './delivery-job';
import { DeliveryLanes } from './delivery-lanes';
import { DeliveryRoute, DeliveryStore, DeliveryTarget } from './delivery.store';
import { DeliverySink, LocalDeliveries } from './local-deliveries';

/** Jobs taken at once: a job only routes its deliveries into lanes, so it is short. */
const JOB_CONCURRENCY = 6;
/** A lease outlasts an attempt's deadline by this much: recording it, a busy event loop. */
const LEASE_MARGIN_MS = 5000;
/** Deliveries one webhook may have waiting in this process; the rest wait in the queue. */
const WAITING_PER_WEBHOOK = 1000;
/** Claim statements in flight at once (each claims what the free slots allow). */
const CLAIMS_IN_FLIGHT = 1;
/**
 * Works the deliveries queue (worker role). A job carries several deliveries; the worker finds
 * their webhooks and puts them in that webhook's lane (DeliveryLanes). From the lanes, as slots
 * free up (DELIVERY_CONCURRENCY requests in flight per process, at most
 * DELIVERY_CONCURRENCY_PER_WEBHOOK of them to one webhook, SPEC §9), deliveries are claimed in
 * PostgreSQL, which leases them to this worker, and their attempts start
 * (DeliveryAttemptService). The job ends once its deliveries are in lanes; a worker that dies
 * leaves them pending and unleased, and one that dies mid-attempt leaves them leased until the
 * lease lapses: either way the sweeper queues them again. A failed attempt with retries left
 * is queued again as a job delayed by its backoff.
 */
@Injectable()
export class DeliveriesProcessor implements OnModuleInit, BeforeApplicationShutdown, DeliverySink {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly lanes: DeliveryLanes;
  /** Attempts started and not yet recorded, which shutdown waits for. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly attempts: DeliveryAttemptService,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Pick<Queue, 'addBulk'>,
    private readonly local: LocalDeliveries,
  ) {
    const leaseMs = config.delivery.timeoutMs + LEASE_MARGIN_MS;
    this.lanes = new DeliveryLanes(
      {
        capacity: config.delivery.concurrency,
        perWebhook: config.delivery.concurrencyPerWebhook,
        waitingPerWebhook: WAITING_PER_WEBHOOK,
        claimsInFlight: CLAIMS_IN_FLIGHT,
      },
      {
        claim: (ids) => this.store.claim(ids, leaseMs),
        start: (target, release) => this.start(target, release),
        claimFailed: (ids, error) =>
          this.logger.error(
            `claiming ${ids.length} deliveries failed: ${error.message}; they stay pending ` +
              'and the sweeper queues them again',
          ),
      },
    );
  }

  @OnJob({
    queue: QUEUES.deliveries,
    job: JOBS.deliver,
    concurrency: JOB_CONCURRENCY,
    whenFinal: 'the sweeper re-queues its deliveries while they are pending',
  })
  async handle(job: Job<DeliverJobData>): Promise<void> {
    if (this.closing) throw new Error('worker shutting down before the job was taken');
    const routes = await routesOf(job.data, (ids) => this.store.route(ids));
    // Should queueing the overflow fail, the job fails and is retried; what it put in lanes is
    // skipped then.
    await this.queueOverflow(this.lanes.add(routes));
  }

  /**
   * What this process publishes, straight into the lanes (LocalDeliveries). What finds its lane
   * full goes back to the publisher, which queues it in shared jobs: through handle() it waits
   * in the queue for room like any job's overflow.
   */
  take(deliveries: DeliveryRoute[]): DeliveryRoute[] {
    return this.closing ? deliveries : this.lanes.add(deliveries);
  }

  onModuleInit(): void {
    this.local.attach(this);
  }

  /** Back in the queue until their lane has room again, jittered so they do not all come back together. */
  private async queueOverflow(overflow: DeliveryRoute[]): Promise<void> {
    if (overflow.length === 0) return;
    const delayMs = Math.round(this.lanes.drainMs(overflow) * (1 + Math.random() / 2));
    await this.queue.addBulk(deliverJobs(overflow, delayMs));
  }

  /**
   * Takes nothing more (publishes of this process go to the queue from now on), claims nothing
   * more, waits for the attempts in flight to be recorded, and hands what was waiting back to
   * the queue (best effort: it is pending in PostgreSQL for the sweeper).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.local.detach(this);
    const waiting = this.lanes.close();
    await Promise.all(this.running);
    if (waiting.length === 0) return;
    try {
      await this.queue.addBulk(deliverJobs(waiting));
    } catch (error) {
      this.logger.warn(
        `${waiting.length} waiting deliveries not queued at shutdown (${(error as Error).message}); ` +
          'the sweeper will queue them',
      );
    }
  }

  private start(target: DeliveryTarget, release: () => void): void {
    const running = this.attempts
      .attempt(target, release)
      .then(async (outcome) => {
        if (outcome.next === 'retry') {
          await this.queueRetry(target.id, target.webhookId, outcome.delayMs);
        }
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

  private async queueRetry(deliveryId: string, webhookId: string, delayMs: number): Promise<void> {
    try {
      await this.queue.addBulk(deliverJobs([{ id: deliveryId, webhookId }], delayMs));
    } catch (error) {
      // next_attempt_at is recorded: the sweeper queues the retry once it is overdue.
      this.logger.warn(
        `delivery ${deliveryId}: retry not queued (${(error as Error).message}); the sweeper will queue it`,
      );
    }
  }
}
