import { Injectable } from '@nestjs/common';
import type { DeliveryRef, LeasedDelivery } from '../../delivery-record/delivery.store';

/** A deliveries worker of this process that takes deliveries from their publisher directly. */
export interface DeliverySink {
  /**
   * Puts the deliveries in this worker's lanes as far as they have room, and returns the rest:
   * those past a lane's room, or all of them once it is shutting down. `leased` are those of
   * them leased to this worker as they were stored: it sends them without claiming them, and
   * gives up the leases of those it cannot send (it queues those itself).
   */
  take(deliveries: DeliveryRef[], leased: LeasedDelivery[]): DeliveryRef[];
  /** How long deliveries stored now may be leased to this worker; null: not now. */
  preLeaseMs(): number | null;
}

/**
 * Where a process that also runs the deliveries worker (APP_ROLE=all) hands what it publishes:
 * to that worker, with no round trip through Redis and no job. The rows are the record either
 * way: what the worker has not yet sent when the process dies is pending (unleased, or leased
 * as it was stored until that lease lapses), and the sweeper queues it, as it does for a job
 * Redis lost. An API-only process has no sink and queues jobs for the workers.
 */
@Injectable()
export class LocalDeliveries {
  private sink: DeliverySink | null = null;

  attach(sink: DeliverySink): void {
    this.sink = sink;
  }

  /** Gives the deliveries to this process's worker; returns those it did not take, to be queued. */
  take(deliveries: DeliveryRef[], leased: LeasedDelivery[] = []): DeliveryRef[] {
    return this.sink ? this.sink.take(deliveries, leased) : deliveries;
  }

  /** How long deliveries about to be stored may be leased to this process's worker, if at all. */
  preLeaseMs(): number | null {
    return this.sink?.preLeaseMs() ?? null;
  }
}
