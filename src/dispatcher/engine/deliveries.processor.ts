import { InjectQueue } from '@nestjs/bull';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnModuleInit,
} from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { OnJob } from '../../queue/on-job.decorator';
import { JOBS, QUEUES } from '../../queue/queue.constants';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { DeliverJobData, deliverJobs, jobDeliveryRefs } from '../publish/delivery-job';
import { DeliveryScheduler } from './scheduler/delivery-scheduler';
import type { DeliveryGate } from './scheduler/scheduler-work';
import { DeliveryOrderStore } from '../../delivery-record/delivery-order.store';
import { OrderingGate } from './ordering-gate';
import { PreLeases } from './pre-leases';
import {
  DeliveryRef,
  DeliveryStore,
  DeliveryTarget,
  LeasedDelivery,
} from '../../delivery-record/delivery.store';
import { DeliverySink, LocalDeliveries } from '../publish/local-deliveries';
import { WebhookSlots } from './webhook-slots';
import { withTimeout } from '../../common/with-timeout';

/** How long shutdown waits to give this process's slots back before leaving them to lapse. */
const SLOT_FLUSH_TIMEOUT_MS = 2000;

/** Jobs taken at once: a job only hands its deliveries to the scheduler, so it is short. */
const JOB_CONCURRENCY = 6;
/** A lease outlasts an attempt's deadline by this much: recording it, a busy event loop. */
const LEASE_MARGIN_MS = 5000;
/**
 * Deliveries one webhook may have waiting in this process's memory; the rest stay pending in
 * PostgreSQL, and the scheduler reads them back as the lane drains.
 */
const WAITING_PER_WEBHOOK = 5000;
/**
 * Deliveries are leased as they are stored only while fewer than this many times
 * DELIVERY_CONCURRENCY wait in the scheduler. Such a delivery starts with no claim statement
 * the moment a slot frees (a slot kept from the attempt before it, in the same callback), which
 * is what lets 10 in flight keep up with a burst on a busy machine; one that waited longer
 * than its lease allows is claimed by its own lease instead, so a long backlog costs what it
 * did without. What it risks: a process that dies leaves that many leased for up to two
 * attempts' leases (then the sweeper), and other workers cannot take them meanwhile.
 */
const PRE_LEASE_BACKLOG = 40;

/**
 * Works the deliveries queue (worker role). A job carries several deliveries with their
 * webhooks; the worker hands them to its DeliveryScheduler, which sends each as soon as a slot
 * of its webhook (across every worker, docs/api.md#receiver-health) and one of this process (DELIVERY_CONCURRENCY)
 * are free: it then claims them in PostgreSQL, which leases them to this worker, and their
 * attempts start (DeliveryAttemptService). The job ends once its deliveries are with the
 * scheduler; a worker that dies leaves them pending and unleased, and one that dies
 * mid-attempt leaves them leased until the lease lapses: either way the sweeper queues them
 * again. A failed attempt with retries left is queued again as a job delayed by its backoff.
 * In role all it also takes what its own process publishes, with no job (take), some of it
 * leased already as it was stored.
 */
@Injectable()
export class DeliveriesProcessor implements OnModuleInit, BeforeApplicationShutdown, DeliverySink {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly scheduler: DeliveryScheduler;
  /** Attempts started and not yet recorded, which shutdown waits for. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;
  private readonly leaseMs: number;
  /** A lease taken as a delivery is stored: see preLeaseMs. */
  private readonly storeLeaseMs: number;
  private readonly capacity: number;
  /** Deliveries leased to this worker as this process stored them, until claimed. */
  private readonly preLeased: PreLeases;
  private slotsFailing = false;
  /** Which deliveries may be sent now: an ordered webhook's, only in their turn (docs/receiving.md#ordered-delivery-per-meeting). */
  private readonly gate: DeliveryGate;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly attempts: DeliveryAttemptService,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Pick<Queue, 'addBulk'>,
    private readonly local: LocalDeliveries,
    slots: WebhookSlots,
    order: DeliveryOrderStore,
  ) {
    this.preLeased = new PreLeases(store, queue, this.logger);
    const leaseMs = config.delivery.timeoutMs + LEASE_MARGIN_MS;
    this.leaseMs = leaseMs;
    this.storeLeaseMs = 2 * leaseMs;
    this.capacity = config.delivery.concurrency;
    const defaultMaxInFlight = config.delivery.concurrencyPerWebhook;
    this.scheduler = new DeliveryScheduler(
      { capacity: config.delivery.concurrency, waitingPerWebhook: WAITING_PER_WEBHOOK },
      { maxInFlight: defaultMaxInFlight, rateLimit: null },
      slots,
      {
        limits: (ids) => this.store.limits(ids, defaultMaxInFlight),
        claim: (ids) =>
          this.preLeased.claim(ids, this.leaseMs, (count, error) => this.claimFailed(count, error)),
        leased: (id) => this.preLeased.has(id),
        start: (target, done) => this.start(target, done),
        claimFailed: (ids, error) => this.claimFailed(ids.length, error),
        slotsFailed: (error, retryInMs) => this.slotsFailed(error, retryInMs),
        refill: (webhookId, limit, waiting) => this.store.due(webhookId, limit, waiting),
      },
    );
    // What the scheduler lets go of these stays pending: its lane reads the heads back.
    this.gate = new OrderingGate(
      order,
      (deliveries) => void this.scheduler.submit(deliveries),
      (what, error) =>
        this.logger.warn(
          `reading ${what} failed (${error.message}); they stay pending and the sweeper ` +
            'queues them again',
        ),
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
    const routes = jobDeliveryRefs(job.data);
    // What the scheduler lets go (a backlog past its lane) stays pending: it reads it back.
    this.scheduler.submit(this.gate.admit(routes));
  }

  /**
   * What this process publishes, straight to the scheduler (LocalDeliveries). Those leased
   * here as they were stored are sent on that lease, with no claim; those the scheduler lets
   * go (a long backlog), or a gate holds back, have their leases given up, so that whoever
   * sends them can claim them when their turn comes. Once shutting down it takes nothing: the
   * leased are handed back to the queue from here, the rest to the publisher to queue.
   */
  take(deliveries: DeliveryRef[], leased: LeasedDelivery[]): DeliveryRef[] {
    if (this.closing) {
      const handedBack = new Set(leased.map((l) => l.target.id));
      this.preLeased.handBack(leased);
      return deliveries.filter((d) => !handedBack.has(d.id));
    }
    // An attempt started until then ends (deadline, margin and record) before the lease lapses.
    const usableUntil = Date.now() + this.storeLeaseMs - this.leaseMs;
    this.preLeased.hold(leased, usableUntil);
    // Leased as stored means not ordered (the statement leases no ordered delivery): no gate.
    const admitted = this.gate
      .admit(deliveries.filter((d) => !this.preLeased.has(d.id)))
      .concat(deliveries.filter((d) => this.preLeased.has(d.id)));
    // Held back by the gate, or let go by the scheduler: claimed later, by whoever sends them.
    const sendable = new Set(admitted.map((d) => d.id));
    const notNow = deliveries.filter((d) => !sendable.has(d.id));
    this.preLeased.giveUp(this.preLeased.drop(notNow.concat(this.scheduler.submit(admitted))));
    return [];
  }

  /**
   * Twice an attempt's lease while few deliveries wait, so that a delivery leased as it is
   * stored can wait here up to one lease for a slot. A process that dies leaves them leased for
   * that long; the sweeper waits DELIVERY_SWEEP_INTERVAL_MS (30 s) past their due time anyway.
   */
  preLeaseMs(): number | null {
    if (this.closing || this.scheduler.waitingCount >= PRE_LEASE_BACKLOG * this.capacity) {
      return null;
    }
    return this.storeLeaseMs;
  }

  private claimFailed(count: number, error: Error): void {
    this.logger.error(
      `claiming ${count} deliveries failed: ${error.message}; they stay pending ` +
        'and the sweeper queues them again',
    );
  }

  /** Logged once per outage: the scheduler retries every `retryInMs` meanwhile. */
  private slotsFailed(error: Error, retryInMs: number): void {
    if (this.slotsFailing) return;
    this.slotsFailing = true;
    this.logger.error(
      `webhook slots unavailable (${error.message}); deliveries wait, retrying every ${retryInMs} ms`,
    );
    setTimeout(() => (this.slotsFailing = false), 60_000).unref();
  }

  onModuleInit(): void {
    this.local.attach(this);
  }

  /**
   * Takes nothing more (take hands this process's publishes back from now on, leases given up
   * first), starts nothing more, waits for the attempts in flight to be recorded, gives their
   * slots back, and hands what was waiting back to the queue (best effort: it is pending in
   * PostgreSQL for the sweeper).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    const waiting = this.scheduler.close();
    await Promise.all(this.running);
    // Bounded: with Redis out of reach the script would wait for a reconnect that may never
    // come, and a slot not given back lapses with its lease anyway.
    await withTimeout(this.scheduler.flush(), SLOT_FLUSH_TIMEOUT_MS, 'Redis did not answer').catch(
      (error: Error) =>
        this.logger.warn(`slots not given back at shutdown (${error.message}); they lapse`),
    );
    if (waiting.length === 0) return;
    const held = this.preLeased.dropAll(waiting);
    if (held.length > 0) {
      // Before they are queued: the worker that takes them must be able to claim them.
      await this.preLeased
        .release(held)
        .catch((error: Error) =>
          this.logger.warn(
            `${held.length} leases not given up at shutdown (${error.message}); ` +
              'those deliveries wait for their leases to lapse',
          ),
        );
    }
    try {
      await this.queue.addBulk(deliverJobs(waiting));
    } catch (error) {
      this.logger.warn(
        `${waiting.length} waiting deliveries not queued at shutdown (${(error as Error).message}); ` +
          'the sweeper will queue them',
      );
    }
  }

  private start(target: DeliveryTarget, done: () => void): void {
    const running = this.attempts
      .attempt(target, done)
      .then(async (outcome) => {
        if (outcome.next === 'retry') {
          await this.queueRetry(target.id, target.webhookId, outcome.delayMs);
        } else {
          this.scheduler.submit(this.gate.ended(target));
        }
      })
      .catch((error: Error) =>
        this.logger.error(
          `delivery ${target.id}: ${error.message}; the attempt is not recorded: the sweeper ` +
            're-queues the delivery once its lease lapses',
        ),
      )
      .finally(() => {
        // Whatever happened, the slot goes back (attempt() gives it back as its request ends).
        done();
        this.running.delete(running);
      });
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
