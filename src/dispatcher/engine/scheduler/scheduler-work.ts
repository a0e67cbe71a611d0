import type { DeliveryTarget, WebhookLimit } from '../../../delivery-record/delivery.store';

/** A delivery handed to the scheduler: ready to be sent as soon as its webhook has a slot. */
export interface ScheduledDelivery {
  id: string;
  webhookId: string;
}

/**
 * Decides which deliveries may be submitted now (for example: an ordered webhook's delivery
 * only once its key's predecessor ended). `admit` returns those ready now and keeps the rest;
 * `ended` is told of each delivery that ended (succeeded or failed for good) and returns those
 * it now lets go (OrderingGate).
 */
export interface DeliveryGate {
  admit(deliveries: ScheduledDelivery[]): ScheduledDelivery[];
  ended(delivery: ScheduledDelivery): ScheduledDelivery[];
}

export interface SchedulerLimits {
  /** Attempts in flight in this process (DELIVERY_CONCURRENCY). */
  capacity: number;
  /** Deliveries of one webhook kept waiting in memory; past it they stay in PostgreSQL. */
  waitingPerWebhook: number;
}

/** What the scheduler needs of the rest of the worker. */
export interface SchedulerWork {
  /** The limits of these webhooks (those gone: any value, their claims find nothing). */
  limits(webhookIds: string[]): Promise<Map<string, WebhookLimit>>;
  /** Leases the deliveries (DeliveryStore.claim); those it does not return are not sent. */
  claim(deliveryIds: string[]): Promise<DeliveryTarget[]>;
  /**
   * Whether claiming the delivery needs no statement (it was leased to this worker as it was
   * stored): then a slot kept for it is used at once, not with the next round's claims.
   */
  leased(deliveryId: string): boolean;
  /** Starts the attempt of a leased delivery; `done` is called once its request is over. */
  start(target: DeliveryTarget, done: () => void): void;
  /** A claim failed: its deliveries stay pending and unleased in PostgreSQL. */
  claimFailed(deliveryIds: string[], error: Error): void;
  /** Talking to WebhookSlots failed; the scheduler tries again after `retryInMs`. */
  slotsFailed(error: Error, retryInMs: number): void;
  /**
   * Up to `limit` ids of the webhook's pending, due, unleased deliveries other than `waiting`,
   * oldest first: what a lane that let deliveries go (a backlog past waitingPerWebhook) takes
   * back as it drains.
   */
  refill(webhookId: string, limit: number, waiting: string[]): Promise<string[]>;
}
