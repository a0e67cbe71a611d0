import type { DeliveryRoute, DeliveryTarget } from './delivery.store';

/** The slot time assumed for a webhook not yet heard from. */
const UNKNOWN_HOLD_MS = 100;
const MIN_DRAIN_MS = 1000;
const MAX_DRAIN_MS = 60_000;

export interface LaneLimits {
  /** Attempts in flight in this process (DELIVERY_CONCURRENCY). */
  capacity: number;
  /** Attempts in flight to one webhook (DELIVERY_CONCURRENCY_PER_WEBHOOK, SPEC §9). */
  perWebhook: number;
  /** Deliveries one webhook may have waiting here; past it, `add` hands them back. */
  waitingPerWebhook: number;
  /** Claim statements in flight at once: while they run, freed slots gather for the next. */
  claimsInFlight: number;
}

export interface LaneWork {
  /** Leases the deliveries (DeliveryStore.claim); those it does not return were not leased. */
  claim(deliveryIds: string[]): Promise<DeliveryTarget[]>;
  /** Starts the attempt of a leased delivery; `release` frees its slots once the request is over. */
  start(target: DeliveryTarget, release: () => void): void;
  /** A claim statement failed: its deliveries stay pending and unleased in PostgreSQL. */
  claimFailed(deliveryIds: string[], error: Error): void;
}

/**
 * Deliveries this worker has taken from the queue and not yet claimed, one lane per webhook.
 * A delivery is claimed (leased in PostgreSQL) only once a slot of this process and a slot of
 * its webhook are free, so a claim never takes what cannot be sent at once, and nothing the
 * claim leases waits (what `work.claim` has leased before, see DeliveriesProcessor.take, it
 * answers for). Lanes are served in turn, so a webhook with a long backlog or a slow receiver
 * holds at most its own DELIVERY_CONCURRENCY_PER_WEBHOOK slots while the others go on.
 *
 * A waiting delivery is only in this process's memory; its record is pending, so if the process
 * dies the sweeper queues it again, and if another worker got it first, the claim (which leases
 * only what no one holds) skips it.
 */
export class DeliveryLanes {
  private readonly waiting = new Map<string, Set<string>>();
  /** Slots in use per webhook: claims in flight and attempts not over. */
  private readonly busy = new Map<string, number>();
  /** How long a slot of each webhook is held, claim to response (a moving average, ms). */
  private readonly holdMs = new Map<string, number>();
  private used = 0;
  private waitingTotal = 0;
  private claiming = 0;
  private pumpScheduled = false;
  private closed = false;

  constructor(
    private readonly limits: LaneLimits,
    private readonly work: LaneWork,
  ) {}

  /** Adds deliveries to their lanes and claims what the free slots allow; returns those that did not fit. */
  add(entries: DeliveryRoute[]): DeliveryRoute[] {
    const overflow: DeliveryRoute[] = [];
    for (const { id, webhookId } of entries) {
      let lane = this.waiting.get(webhookId);
      if (!lane) this.waiting.set(webhookId, (lane = new Set()));
      if (lane.has(id)) continue;
      if (lane.size >= this.limits.waitingPerWebhook) overflow.push({ id, webhookId });
      else {
        lane.add(id);
        this.waitingTotal++;
      }
    }
    this.pump();
    return overflow;
  }

  /**
   * About how long until the fullest lane of these deliveries' webhooks has drained: when to
   * offer again what `add` handed back. At least a second, at most a minute.
   */
  drainMs(deliveries: DeliveryRoute[]): number {
    let longest = 0;
    for (const webhookId of new Set(deliveries.map((d) => d.webhookId))) {
      const waiting = this.waiting.get(webhookId)?.size ?? 0;
      const hold = this.holdMs.get(webhookId) ?? UNKNOWN_HOLD_MS;
      longest = Math.max(longest, (waiting / this.limits.perWebhook) * hold);
    }
    return Math.min(Math.max(longest, MIN_DRAIN_MS), MAX_DRAIN_MS);
  }

  /** Deliveries waiting for a slot. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  /** Attempts (and claims) holding slots. */
  get inFlight(): number {
    return this.used;
  }

  /** Claims nothing more; returns what was waiting, which is left to whoever queues it next. */
  close(): DeliveryRoute[] {
    this.closed = true;
    const left = [...this.waiting].flatMap(([webhookId, lane]) =>
      [...lane].map((id) => ({ id, webhookId })),
    );
    this.waiting.clear();
    this.waitingTotal = 0;
    return left;
  }

  private pump(): void {
    while (!this.closed && this.claiming < this.limits.claimsInFlight) {
      const batch = this.nextBatch();
      if (batch.length === 0) return;
      this.claimBatch(batch);
    }
  }

  /** Takes from the lanes, in turn, what the free slots allow. */
  private nextBatch(): DeliveryRoute[] {
    const free = this.limits.capacity - this.used;
    if (free <= 0) return [];
    const open: [string, Set<string>, number][] = [];
    for (const [webhookId, lane] of this.waiting) {
      const room = this.limits.perWebhook - (this.busy.get(webhookId) ?? 0);
      if (room > 0) open.push([webhookId, lane, room]);
    }
    const batch: DeliveryRoute[] = [];
    // One at a time from each open lane, round and round: fair when slots are few.
    for (let left = free; left > 0 && open.length > 0;) {
      for (let i = 0; i < open.length && left > 0; i++) {
        const [webhookId, lane, room] = open[i];
        const id = lane.values().next().value as string;
        lane.delete(id);
        this.waitingTotal--;
        batch.push({ id, webhookId });
        left--;
        // A lane served goes to the back, so when slots are few the next claim starts elsewhere.
        this.waiting.delete(webhookId);
        if (lane.size > 0) this.waiting.set(webhookId, lane);
        if (room === 1 || lane.size === 0) open.splice(i--, 1);
        else open[i][2] = room - 1;
      }
    }
    for (const { webhookId } of batch) this.take(webhookId);
    return batch;
  }

  private claimBatch(batch: DeliveryRoute[]): void {
    this.claiming++;
    const ids = batch.map((entry) => entry.id);
    const claimedAt = Date.now();
    this.work
      .claim(ids)
      .then(
        (targets) => {
          const claimed = new Set<string>();
          for (const target of targets) {
            claimed.add(target.id);
            this.work.start(target, this.releaser(target.webhookId, claimedAt));
          }
          // Taken by another worker, final, not due or gone: nothing to send here.
          for (const entry of batch) if (!claimed.has(entry.id)) this.give(entry.webhookId);
        },
        (error: Error) => {
          for (const entry of batch) this.give(entry.webhookId);
          this.work.claimFailed(ids, error);
        },
      )
      .finally(() => {
        this.claiming--;
        this.pump();
      });
  }

  /**
   * Claims on the next turn of the event loop: the slots freed by all the responses read in
   * this one go into one claim, not a claim each.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private take(webhookId: string): void {
    this.used++;
    this.busy.set(webhookId, (this.busy.get(webhookId) ?? 0) + 1);
  }

  private give(webhookId: string): void {
    this.used--;
    const left = (this.busy.get(webhookId) ?? 1) - 1;
    if (left === 0) this.busy.delete(webhookId);
    else this.busy.set(webhookId, left);
  }

  private releaser(webhookId: string, since: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = Date.now() - since;
      const average = this.holdMs.get(webhookId);
      this.holdMs.set(webhookId, average === undefined ? held : average + (held - average) / 5);
      this.give(webhookId);
      this.schedulePump();
    };
  }
}
