import { Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import {
  DeliveryRef,
  DeliveryStore,
  DeliveryTarget,
  LeasedDelivery,
} from '../../delivery-record/delivery.store';
import { deliverJobs } from '../publish/delivery-job';

/** A delivery leased to this worker as it was stored, not yet started. */
interface PreLeased {
  target: DeliveryTarget;
  lease: string;
  /** Until when (this process's clock) an attempt started on it ends before it lapses. */
  usableUntil: number;
}

/**
 * Deliveries leased to this worker as this process stored them (the ingest statement leases
 * them; see DeliveriesProcessor.preLeaseMs), by id, until claimed: such a delivery starts with
 * no claim statement while its lease has an attempt's length left. What is not used is given
 * up, so that whoever sends it can claim it.
 */
export class PreLeases {
  private readonly held = new Map<string, PreLeased>();

  constructor(
    private readonly store: Pick<DeliveryStore, 'claim' | 'release'>,
    private readonly queue: Pick<Queue, 'addBulk'>,
    private readonly logger: Logger,
  ) {}

  /** Keeps `leased`, usable until `usableUntil` (this process's clock). */
  hold(leased: LeasedDelivery[], usableUntil: number): void {
    for (const { target, lease } of leased)
      this.held.set(target.id, { target, lease, usableUntil });
  }

  has(deliveryId: string): boolean {
    return this.held.has(deliveryId);
  }

  /** Stops holding these; the leases of those held, to give up. */
  drop(deliveries: DeliveryRef[]): PreLeased[] {
    return deliveries.flatMap((d) => {
      const held = this.held.get(d.id);
      if (!held) return [];
      this.held.delete(d.id);
      return [held];
    });
  }

  /** Forgets them all (at shutdown); the leases of those among `deliveries`. */
  dropAll(deliveries: DeliveryRef[]): PreLeased[] {
    const held = deliveries.flatMap((d) => this.held.get(d.id) ?? []);
    this.held.clear();
    return held;
  }

  /**
   * Leases what the scheduler offers: a delivery leased as it was stored, while that lease has
   * an attempt's length left, is used as it is; one whose lease is shorter is renewed by it,
   * and the others are claimed, in one statement. A failed claim fails the call only when
   * nothing was ready without it (`claimFailed` hears of it otherwise).
   */
  async claim(
    ids: string[],
    leaseMs: number,
    claimFailed: (count: number, error: Error) => void,
  ): Promise<DeliveryTarget[]> {
    const now = Date.now();
    const ready: DeliveryTarget[] = [];
    const toClaim: string[] = [];
    const own: string[] = [];
    for (const id of ids) {
      const held = this.held.get(id);
      if (held) {
        this.held.delete(id);
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
      return ready.concat(await this.store.claim(toClaim, leaseMs, own));
    } catch (error) {
      // What needed no claim still goes: its lease is this worker's.
      if (ready.length === 0) throw error;
      claimFailed(toClaim.length, error as Error);
      return ready;
    }
  }

  /** Ends leases taken for this worker as the deliveries were stored. */
  release(leased: { target: DeliveryTarget; lease: string }[]): Promise<void> {
    return this.store.release(
      leased.map((l) => l.target.id),
      leased.map((l) => l.lease),
      leased.map((l) => l.target.createdAt),
    );
  }

  /**
   * Gives up the leases taken for this worker as the deliveries were stored. Best effort: what
   * fails here is pending in PostgreSQL, claimable once its lease lapses.
   */
  giveUp(leased: { target: DeliveryTarget; lease: string }[]): void {
    if (leased.length === 0) return;
    void this.release(leased).catch((error: Error) =>
      this.logger.warn(
        `${leased.length} deliveries leased as they were stored not given up ` +
          `(${error.message}); they wait for their leases to lapse`,
      ),
    );
  }

  /**
   * Gives up the leases taken for this worker as the deliveries were stored, then queues them
   * for any worker, in that order (the worker that takes them must be able to claim them).
   * Best effort: what fails here is pending in PostgreSQL, and the sweeper queues it once its
   * lease lapses.
   */
  handBack(leased: LeasedDelivery[]): void {
    if (leased.length === 0) return;
    const routes = leased.map((l) => ({ id: l.target.id, webhookId: l.target.webhookId }));
    void this.release(leased)
      .then(() => this.queue.addBulk(deliverJobs(routes)))
      .catch((error: Error) =>
        this.logger.warn(
          `${leased.length} deliveries leased as they were stored not handed back ` +
            `(${error.message}); the sweeper queues them once their leases lapse`,
        ),
      );
  }
}
