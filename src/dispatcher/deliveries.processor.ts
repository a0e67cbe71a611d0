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
import { DeliverJobData, deliverJobs, jobRoutes } from './delivery-job';
import { DeliveryLanes } from './delivery-lanes';
import { DeliveryRoute, DeliveryStore, DeliveryTarget, LeasedDelivery } from './delivery.store';
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
 * Deliveries are leased as they are stored only while fewer than this many times
 * DELIVERY_CONCURRENCY wait in the lanes: a lease taken then is used within moments.
 */
const PRE_LEASE_BACKLOG = 4;

/** A delivery leased to this worker as it was stored, not yet started. */
interface PreLeased {
  target: DeliveryTarget;
  lease: string;
  /** Until when (this process's clock) an attempt started on it ends before it lapses. */
  usableUntil: number;
}

/**
 * Works the deliveries queue (worker role). A job carries several deliveries; the worker finds
 * their webhooks and puts them in that webhook's lane (DeliveryLanes). From the lanes, as slots
 * free up (DELIVERY_CONCURRENCY requests in flight per process, at most
 * DELIVERY_CONCURRENCY_PER_WEBHOOK of them to one webhook, SPEC §9), deliveries are claimed in
 * PostgreSQL, which leases them to this worker, and their attempts start
 * (DeliveryAttemptService). The job ends once its deliveries are in lanes; a worker that dies
 * leaves them pending and unleased, and one that dies mid-attempt leaves them leased until the
 * lease lapses: either way the sweeper queues them again. A failed attempt with retries left
 * is queued again as a job delayed by its backoff. In role all it also takes what its own
 * process publishes, with no job (take), some of it leased already as it was stored.
 */
@Injectable()
export class DeliveriesProcessor implements OnModuleInit, BeforeApplicationShutdown, DeliverySink {
  private readonly logger = new Logger(DeliveriesProcessor.name);
  private readonly lanes: DeliveryLanes;
  /** Attempts started and not yet recorded, which shutdown waits for. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;
  private readonly leaseMs: number;
  /** A lease taken as a delivery is stored: see preLeaseMs. */
  private readonly storeLeaseMs: number;
  private readonly capacity: number;
  /** Deliveries leased to this worker as this process stored them, by id, until claimed. */
  private readonly preLeased = new Map<string, PreLeased>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly attempts: DeliveryAttemptService,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Pick<Queue, 'addBulk'>,
    private readonly local: LocalDeliveries,
  ) {
    const leaseMs = config.delivery.timeoutMs + LEASE_MARGIN_MS;
    this.leaseMs = leaseMs;
    this.storeLeaseMs = 2 * leaseMs;
    this.capacity = config.delivery.concurrency;
    this.lanes = new DeliveryLanes(
      {
        capacity: config.delivery.concurrency,
        perWebhook: config.delivery.concurrencyPerWebhook,
        waitingPerWebhook: WAITING_PER_WEBHOOK,
        claimsInFlight: CLAIMS_IN_FLIGHT,
      },
      {
        claim: (ids) => this.claim(ids),
        start: (target, release) => this.start(target, release),
        claimFailed: (ids, error) => this.claimFailed(ids.length, error),
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
    const routes = jobRoutes(job.data);
    // Should queueing the overflow fail, the job fails and is retried; what it put in lanes is
    // skipped then.
    await this.queueOverflow(this.lanes.add(routes));
  }

  /**
   * What this process publishes, straight into the lanes (LocalDeliveries). What finds its lane
   * full goes back to the publisher, which queues it in shared jobs: through handle() it waits
   * in the queue for room like any job's overflow. Those leased here as they were stored are
   * sent on that lease, with no claim; should their lane be full, their leases are given up and
   * they are queued from here, in that order, so the worker that takes them can claim them.
   */
  take(deliveries: DeliveryRoute[], leased: LeasedDelivery[]): DeliveryRoute[] {
    if (this.closing) {
      const handedBack = new Set(leased.map((l) => l.target.id));
      this.handBack(leased);
      return deliveries.filter((d) => !handedBack.has(d.id));
    }
    // An attempt started until then ends (deadline, margin and record) before the lease lapses.
    const usableUntil = Date.now() + this.storeLeaseMs - this.leaseMs;
    for (const { target, lease } of leased) {
      this.preLeased.set(target.id, { target, lease, usableUntil });
    }
    const overflow = this.lanes.add(deliveries);
    const rest: DeliveryRoute[] = [];
    const leasedOverflow: LeasedDelivery[] = [];
    for (const route of overflow) {
      const held = this.preLeased.get(route.id);
      if (!held) rest.push(route);
      else {
        this.preLeased.delete(route.id);
        leasedOverflow.push(held);
      }
    }
    this.handBack(leasedOverflow);
    return rest;
  }

  /**
   * Twice an attempt's lease while the lanes are short, so that a delivery leased as it is
   * stored can wait here up to one lease for a slot. A process that dies leaves them leased for
   * that long; the sweeper waits DELIVERY_SWEEP_INTERVAL_MS (30 s) past their due time anyway.
   */
  preLeaseMs(): number | null {
    if (this.closing || this.lanes.waitingCount >= PRE_LEASE_BACKLOG * this.capacity) return null;
    return this.storeLeaseMs;
  }

  /**
   * Leases what the lanes offer: a delivery leased as it was stored, while that lease has an
   * attempt's length left, is used as it is; one whose lease is shorter is renewed by it, and
   * the others are claimed, in one statement.
   */
  private async claim(ids: string[]): Promise<DeliveryTarget[]> {
    const now = Date.now();
    const ready: DeliveryTarget[] = [];
    const toClaim: string[] = [];
    const own: string[] = [];
    for (const id of ids) {
      const held = this.preLeased.get(id);
      if (held) {
        this.preLeased.delete(id);
        if (now < held.usableUntil) {
          ready.push(held.target);
          continue;
        }
        own.push(held.lease);
      }
      toClaim.push(id);
    }
    if (toClaim.length === 0) return ready;
    try {
      return ready.concat(await this.store.claim(toClaim, this.leaseMs, own));
    } catch (error) {
      // What needed no claim still goes: its lease is this worker's.
      if (ready.length === 0) throw error;
      this.claimFailed(toClaim.length, error as Error);
      return ready;
    }
  }

  private claimFailed(count: number, error: Error): void {
    this.logger.error(
      `claiming ${count} deliveries failed: ${error.message}; they stay pending ` +
        'and the sweeper queues them again',
    );
  }

  /**
   * Gives up the leases taken for this worker as the deliveries were stored, then queues them
   * for any worker. Best effort: what fails here is pending in PostgreSQL, and the sweeper
   * queues it once its lease lapses.
   */
  private handBack(leased: LeasedDelivery[]): void {
    if (leased.length === 0) return;
    void this.releaseAndQueue(leased).catch((error: Error) =>
      this.logger.warn(
        `${leased.length} deliveries leased as they were stored not handed back ` +
          `(${error.message}); the sweeper queues them once their leases lapse`,
      ),
    );
  }

  private async releaseAndQueue(leased: LeasedDelivery[]): Promise<void> {
    const ids = leased.map((l) => l.target.id);
    await this.store.release(
      ids,
      leased.map((l) => l.lease),
    );
    await this.queue.addBulk(
      deliverJobs(leased.map((l) => ({ id: l.target.id, webhookId: l.target.webhookId }))),
    );
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
   * Takes nothing more (take hands this process's publishes to the queue from now on, leases
   * given up first), claims nothing more, waits for the attempts in flight to be recorded, and hands what was waiting back to
   * the queue (best effort: it is pending in PostgreSQL for the sweeper).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    const waiting = this.lanes.close();
    await Promise.all(this.running);
    if (waiting.length === 0) return;
    const held = waiting.flatMap((route) => this.preLeased.get(route.id) ?? []);
    this.preLeased.clear();
    if (held.length > 0) {
      // Before they are queued: the worker that takes them must be able to claim them.
      await this.store
        .release(
          held.map((h) => h.target.id),
          held.map((h) => h.lease),
        )
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
