import type { DeliveryTarget, WebhookLimit } from '../delivery-record/delivery.store';
import type { SlotAnswer, SlotRequest, SlotToken, WebhookSlots } from './webhook-slots';

/*
 * The delivery scheduler: how a delivery goes from "ready" to "being sent" (docs/api.md#receiver-health).
 *
 * The plug-in points, all in this file:
 *  - A delivery is handed to the scheduler with `DeliveryScheduler.submit`, as a
 *    ScheduledDelivery, once it is ready to be sent: pending, due, and (for a gate, such as
 *    the order of an ordered webhook's deliveries) allowed to go. What is not ready yet is
 *    held by whoever decides so (a DeliveryGate) and submitted when it becomes ready.
 *  - The scheduler starts an attempt through SchedulerWork.start (DeliveryAttemptService, which
 *    sends through the delivery's destination: destinations/) and is told when its request is
 *    over, which frees the slot.
 *  - Between them: a submitted delivery waits in its webhook's lane until a slot of its
 *    webhook (held in WebhookSlots, across every worker process) and a slot of this process
 *    are both free, and then at once, with nothing re-queued on a guess: a slot given back
 *    here, or announced by another process, or the rate window moving on, is what wakes it.
 */

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

/** How long a webhook's limits are used before they are read again (a PATCH takes this long). */
export const LIMITS_TTL_MS = 5000;
/**
 * The share of a process's capacity kept for webhooks that hold none of its slots: a webhook
 * holding slots here takes another only while more than `capacity / RESERVE_DIVISOR` (rounded
 * down) stay free. A webhook's max_in_flight may exceed DELIVERY_CONCURRENCY, and a receiver
 * that never answers keeps every slot it gets for a whole attempt's deadline: without the
 * reserve one such webhook (or a few) could hold all of them, and every other webhook's
 * deliveries would wait for its attempts to time out (docs/operations.md, "Fairness").
 */
export const RESERVE_DIVISOR = 5;

/** Slots of a process of `capacity` that only webhooks holding none of its slots may take. */
export function reservedSlots(capacity: number): number {
  return Math.floor(capacity / RESERVE_DIVISOR);
}

/** After WebhookSlots failed (Redis unreachable), the next try. */
const SLOTS_RETRY_MS = 1000;

interface Lane {
  waiting: Set<string>;
  /** Taken from `waiting` and not over yet: claimed, or being sent. */
  sending: Set<string>;
  /** Slots of this webhook this process holds (claims and attempts). */
  busy: number;
  /** Some of its deliveries were let go (waitingPerWebhook): refill as it drains. */
  spilled: boolean;
  refilling: boolean;
  /** Waiting for a slot another process holds: asked again when one is announced free. */
  parked: boolean;
  /** When the earliest slot it waits for lapses, should nobody announce one free before. */
  lapseAt: number;
  /** Not asked again before then (rate limit; a lapsing lease), ms since the epoch. */
  wakeAt: number;
  /** Until then its slots are given back, not kept: another process waits for one. */
  contendedUntil: number;
  /** Slots kept with no attempt on them (see keepIdle), with when each became idle. */
  idle: { holding: Holding; at: number }[];
}

/** A delivery holding a slot, from the grant until its attempt's request is over. */
interface Holding {
  id: string;
  webhookId: string;
  token: string;
  /** When the slot was taken from WebhookSlots (kept slots keep it). */
  since: number;
  /** When its lease was last started (taken or renewed), as far as this process knows. */
  leasedAt: number;
}

/** How long a process that learnt another waits for a webhook's slot counts it as contended. */
const CONTENDED_MS = 1000;
/**
 * How long a slot of a contended webhook is kept for this process's next deliveries before it
 * goes back for the other process: handing a slot over costs a few round trips, so processes
 * take turns by the second, not by the attempt.
 */
const KEEP_CONTENDED_MS = 1000;
/**
 * A kept slot's lease is renewed once it is this old, not at every attempt it serves: a
 * renewal is script work in Redis and a round from this process, and under a burst a slot
 * serves many attempts a second. Far inside the lease's margin past an attempt's deadline, so
 * an attempt started on a slot not renewed still ends well before its lease lapses; and short
 * next to KEEP_CONTENDED_MS, since a renewal's answer is also how this process learns that
 * another one waits for the webhook's slots.
 */
export const RENEW_AFTER_MS = 250;
/**
 * How long a slot whose lane has nothing left to send is kept for the webhook's next delivery
 * before it goes back. Under a steady flow the lane empties between deliveries that come a
 * fraction of a millisecond apart; giving the slot back and asking for it again then costs two
 * rounds per delivery, each a script in Redis and a turn of this process. Short enough that a
 * process waiting for the slot (which this one learns only at its next round) hardly notices.
 */
export const IDLE_KEEP_MS = 50;

/**
 * Sends submitted deliveries as slots allow (see the top of this file). Every round is one
 * call to WebhookSlots, which gives back the slots of the attempts over since the last and
 * takes slots for every lane at once; only one round is in flight, and what happens meanwhile
 * gathers into the next. Lanes share this process's capacity in turn, one slot each at a
 * time, so a webhook with a long backlog or a slow receiver holds at most its own slots while
 * the others go on; and never the last fifth of them (RESERVE_DIVISOR), which goes one slot
 * each to webhooks holding none, however high their max_in_flight.
 *
 * A waiting delivery is only in this process's memory; its record is pending and unleased, so
 * if the process dies the sweeper queues it again, and if another worker got it first, the
 * claim (which leases only what no one holds) skips it and its slot is given back.
 */
export class DeliveryScheduler {
  private readonly lanes = new Map<string, Lane>();
  /** See RESERVE_DIVISOR. */
  private readonly reserve: number;
  private readonly limitCache = new Map<string, { limit: WebhookLimit; at: number }>();
  private loadingLimits = false;
  private released: SlotToken[] = [];
  /** Slots kept for a next delivery of the same webhook, to renew in the next round. */
  private renewed: SlotToken[] = [];
  /** Deliveries that took a kept slot, to claim on the next turn. */
  private reused: Holding[] = [];
  private used = 0;
  private waitingTotal = 0;
  private exchanging = false;
  private pumpScheduled = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Lanes with idle slots given deliveries in this submit. */
  private readonly withIdle = new Set<Lane>();
  /** Idle slots in all lanes. */
  private idleCount = 0;
  /** Where the next round starts handing out this process's capacity. */
  private turn = 0;

  constructor(
    private readonly limits: SchedulerLimits,
    private readonly defaults: WebhookLimit,
    private readonly slots: WebhookSlots,
    private readonly work: SchedulerWork,
  ) {
    this.reserve = reservedSlots(limits.capacity);
    slots.onFreed((webhookId) => {
      const lane = this.lanes.get(webhookId);
      if (lane?.parked) {
        lane.parked = false;
        this.schedulePump();
      }
    });
  }

  /**
   * Puts the deliveries in their lanes; they are sent as slots allow. Returns those it let go
   * (a lane past waitingPerWebhook): they stay pending in PostgreSQL, and the lane takes them
   * back as it drains.
   */
  submit(deliveries: ScheduledDelivery[]): ScheduledDelivery[] {
    const spilled: ScheduledDelivery[] = [];
    if (this.closed) return deliveries;
    for (const delivery of deliveries) {
      const lane = this.lane(delivery.webhookId);
      if (lane.idle.length > 0) this.withIdle.add(lane);
      if (lane.waiting.has(delivery.id) || lane.sending.has(delivery.id)) continue;
      if (lane.waiting.size >= this.limits.waitingPerWebhook) {
        lane.spilled = true;
        spilled.push(delivery);
        continue;
      }
      lane.waiting.add(delivery.id);
      this.waitingTotal++;
    }
    this.useIdle();
    this.schedulePump();
    return spilled;
  }

  /** Deliveries waiting for a slot. */
  get waitingCount(): number {
    return this.waitingTotal;
  }

  /** Slots this process holds: attempts (and their claims) not over. */
  get inFlight(): number {
    return this.used;
  }

  /** Takes nothing more; returns what was waiting, left to whoever queues it next. */
  close(): ScheduledDelivery[] {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.releaseIdle(() => true);
    const left = [...this.lanes].flatMap(([webhookId, lane]) =>
      [...lane.waiting].map((id) => ({ id, webhookId })),
    );
    for (const lane of this.lanes.values()) lane.waiting.clear();
    this.waitingTotal = 0;
    return left;
  }

  /** Gives back the slots of the attempts over since the last round (at shutdown). */
  async flush(): Promise<void> {
    if (this.released.length === 0) return;
    const released = this.released;
    this.released = [];
    await this.slots.exchange({ released, renewed: [], requests: [] });
  }

  private lane(webhookId: string): Lane {
    let lane = this.lanes.get(webhookId);
    if (!lane) {
      lane = {
        waiting: new Set(),
        sending: new Set(),
        busy: 0,
        spilled: false,
        refilling: false,
        parked: false,
        lapseAt: 0,
        wakeAt: 0,
        contendedUntil: 0,
        idle: [],
      };
      this.lanes.set(webhookId, lane);
    }
    return lane;
  }

  /**
   * Runs a round on the next turn of the event loop: the slots freed by all the responses read
   * in this one go into one round, not one each.
   */
  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.reused.length > 0) {
      const reused = this.reused;
      this.reused = [];
      this.claim(reused);
    }
    if (this.exchanging) return; // the round in flight pumps again when it ends
    const requests = this.closed ? [] : this.requests();
    if (requests.length === 0 && this.released.length === 0 && this.renewed.length === 0) return;
    const { released, renewed } = this;
    this.released = [];
    this.renewed = [];
    this.exchanging = true;
    this.slots
      .exchange({ released, renewed, requests })
      .then(
        (answer) => this.granted(requests, answer),
        (error: Error) => {
          // Given back again in the next round; until then they lapse at worst.
          this.released = released.concat(this.released);
          this.work.slotsFailed(error, SLOTS_RETRY_MS);
          this.wakeAt(Date.now() + SLOTS_RETRY_MS);
        },
      )
      .finally(() => {
        this.exchanging = false;
        if (this.released.length > 0 || this.hasAskable()) this.schedulePump();
      });
  }

  /** How many slots to ask for, per lane: this process's free capacity, in turn. */
  private requests(): SlotRequest[] {
    const now = Date.now();
    let free = this.limits.capacity - this.used;
    if (free <= 0) return [];
    const open: {
      webhookId: string;
      lane: Lane;
      room: number;
      want: number;
      limit: WebhookLimit;
    }[] = [];
    const unknown: string[] = [];
    const stale: string[] = [];
    const entries = [...this.lanes];
    for (let i = 0; i < entries.length; i++) {
      const [webhookId, lane] = entries[(i + this.turn) % entries.length];
      if (lane.waiting.size === 0) {
        if (lane.busy === 0 && !lane.spilled) this.lanes.delete(webhookId);
        continue;
      }
      const cached = this.limitCache.get(webhookId);
      if (!cached) {
        unknown.push(webhookId);
        continue;
      }
      if (now - cached.at > LIMITS_TTL_MS) stale.push(webhookId);
      if (lane.parked || lane.wakeAt > now) continue;
      const room = Math.min(cached.limit.maxInFlight - lane.busy, lane.waiting.size);
      if (room > 0) open.push({ webhookId, lane, room, want: 0, limit: cached.limit });
    }
    if (open.length > 0) this.turn++;
    if (unknown.length > 0 || stale.length > 0) this.loadLimits(unknown.concat(stale));
    // One slot to each open lane, round and round: fair when this process's slots are few.
    // The last `reserve` free slots go one each to lanes holding none (RESERVE_DIVISOR).
    const mayTake = (entry: (typeof open)[number]) =>
      free > 0 &&
      entry.want < entry.room &&
      (free > this.reserve || entry.lane.busy + entry.want === 0);
    let asking = open.filter(mayTake);
    while (free > 0 && asking.length > 0) {
      for (const entry of asking) {
        if (!mayTake(entry)) continue;
        entry.want++;
        free--;
      }
      asking = asking.filter(mayTake);
    }
    return open
      .filter((entry) => entry.want > 0)
      .map(({ webhookId, want, limit }) => ({
        webhookId,
        want,
        maxInFlight: limit.maxInFlight,
        rateLimit: limit.rateLimit,
      }));
  }

  private hasAskable(): boolean {
    if (this.renewed.length > 0) return true;
    if (this.closed || this.used >= this.limits.capacity) return false;
    const now = Date.now();
    for (const [webhookId, lane] of this.lanes) {
      const limit = this.limitCache.get(webhookId)?.limit;
      if (!limit || lane.waiting.size === 0 || lane.parked || lane.wakeAt > now) continue;
      if (lane.busy < limit.maxInFlight) return true;
    }
    return false;
  }

  private loadLimits(webhookIds: string[]): void {
    if (this.loadingLimits) return;
    this.loadingLimits = true;
    this.work
      .limits(webhookIds)
      .then(
        (found) => {
          const at = Date.now();
          for (const id of webhookIds) {
            this.limitCache.set(id, { limit: found.get(id) ?? this.defaults, at });
          }
          // Webhooks no longer scheduled here are forgotten, so a deleted one leaves nothing.
          for (const id of this.limitCache.keys())
            if (!this.lanes.has(id)) this.limitCache.delete(id);
        },
        (error: Error) => {
          this.work.slotsFailed(error, SLOTS_RETRY_MS);
          this.wakeAt(Date.now() + SLOTS_RETRY_MS);
        },
      )
      .finally(() => {
        this.loadingLimits = false;
        this.schedulePump();
      });
  }

  private granted(requests: SlotRequest[], { grants, contended }: SlotAnswer): void {
    const now = Date.now();
    for (const webhookId of contended) {
      const lane = this.lanes.get(webhookId);
      if (lane) lane.contendedUntil = now + CONTENDED_MS;
    }
    if (contended.length > 0) this.releaseIdle((lane) => lane.contendedUntil > now);
    const batch: Holding[] = [];
    requests.forEach((request, i) => {
      const grant = grants[i];
      const lane = this.lanes.get(request.webhookId) ?? this.lane(request.webhookId);
      const ids = lane.waiting.values();
      for (const token of grant.tokens) {
        const next = ids.next();
        if (next.done || this.closed) {
          // Closed, or taken by close() meanwhile: nothing to send on it.
          this.released.push({ webhookId: request.webhookId, token });
          continue;
        }
        lane.waiting.delete(next.value);
        lane.sending.add(next.value);
        this.waitingTotal--;
        lane.busy++;
        this.used++;
        batch.push({
          id: next.value,
          webhookId: request.webhookId,
          token,
          since: now,
          leasedAt: now,
        });
      }
      if (grant.tokens.length < request.want) {
        const at = now + (grant.retryInMs ?? 0);
        if (grant.rateBound) lane.wakeAt = at;
        else {
          // Another process's slot given back wakes it; a lapsing one, only this timer.
          lane.parked = true;
          lane.lapseAt = grant.retryInMs === null ? Infinity : at;
        }
        if (grant.retryInMs !== null) this.wakeAt(at);
      }
      if (lane.spilled) this.refill(request.webhookId, lane);
    });
    if (batch.length > 0) this.claim(batch);
  }

  private claim(batch: Holding[]): void {
    const ids = batch.map((entry) => entry.id);
    this.work.claim(ids).then(
      (targets) => {
        const byId = new Map(targets.map((target) => [target.id, target]));
        for (const entry of batch) {
          const target = byId.get(entry.id);
          // Taken by another worker, final, not due or gone: its slot goes back.
          if (!target) this.give(entry);
          else this.work.start(target, this.releaser(entry));
        }
      },
      (error: Error) => {
        for (const entry of batch) this.give(entry);
        this.work.claimFailed(ids, error);
      },
    );
  }

  private releaser(entry: Holding): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (!this.reuse(entry)) this.give(entry);
    };
  }

  /**
   * Keeps the slot of an attempt that is over for the next delivery waiting in its lane, with
   * no round trip (its lease renewed in a round once RENEW_AFTER_MS old), or, with nothing
   * waiting, idle (keepIdle): unless another process has waited for this webhook's slots and
   * this one has kept it for KEEP_CONTENDED_MS already, the webhook has a rate limit (each
   * start must be counted), or the process's other lanes wait for its capacity.
   */
  private reuse(entry: Holding): boolean {
    const lane = this.lanes.get(entry.webhookId);
    const limit = this.limitCache.get(entry.webhookId)?.limit;
    if (
      this.closed ||
      !lane ||
      !limit ||
      limit.rateLimit !== null ||
      lane.busy > limit.maxInFlight ||
      (lane.contendedUntil > Date.now() && Date.now() - entry.since >= KEEP_CONTENDED_MS)
    ) {
      return false;
    }
    if (lane.waiting.size === 0) return this.keepIdle(entry, lane);
    // Other lanes wait and only the reserve (or less) is free: the slot goes back into a round,
    // where lanes take turns, instead of serving this lane for ever.
    if (this.limits.capacity - this.used <= this.reserve && this.waitingTotal > lane.waiting.size) {
      return false;
    }
    this.startOn(entry, lane);
    return true;
  }

  /** Sends the next delivery waiting in `lane` on a slot this process already holds. */
  private startOn(entry: Holding, lane: Lane): void {
    const next = lane.waiting.values().next().value as string;
    lane.sending.delete(entry.id);
    lane.waiting.delete(next);
    lane.sending.add(next);
    this.waitingTotal--;
    const holding = { ...entry, id: next };
    const now = Date.now();
    if (now - entry.leasedAt >= RENEW_AFTER_MS) {
      this.renewed.push({ webhookId: entry.webhookId, token: entry.token });
      holding.leasedAt = now;
    }
    // Started from this very callback: a busy event loop would otherwise hold the slot idle
    // for a turn, and at 10 in flight the turn, not the receiver, would set the pace.
    if (this.work.leased(next)) this.claim([holding]);
    else this.reused.push(holding);
    if (lane.spilled) this.refill(entry.webhookId, lane);
    this.schedulePump();
  }

  /**
   * Keeps the slot of an attempt that is over, with nothing left in its lane, for IDLE_KEEP_MS:
   * the webhook's next delivery then takes it with no round. Not while another process is known
   * to wait for the webhook's slots, nor while other lanes wait (the slot counts against this
   * process's capacity).
   */
  private keepIdle(entry: Holding, lane: Lane): boolean {
    if (lane.contendedUntil > Date.now() || this.waitingTotal > 0) return false;
    lane.sending.delete(entry.id);
    // The delivery it served is over: nothing of it stays with the slot.
    lane.idle.push({ holding: { ...entry, id: '' }, at: Date.now() });
    this.idleCount++;
    this.armIdleTimer();
    return true;
  }

  /** Idle slots go to the deliveries now waiting in their lanes; the rest back if others wait. */
  private useIdle(): void {
    for (const lane of this.withIdle) {
      while (lane.idle.length > 0 && lane.waiting.size > 0) {
        this.idleCount--;
        this.startOn(lane.idle.pop()!.holding, lane);
      }
    }
    this.withIdle.clear();
    if (this.waitingTotal > 0 && this.idleCount > 0) this.releaseIdle(() => true);
  }

  /** Gives back the idle slots `which` selects; re-arms the timer for those left. */
  private releaseIdle(which: (lane: Lane, at: number) => boolean): void {
    if (this.idleCount === 0) return;
    for (const lane of this.lanes.values()) {
      if (lane.idle.length === 0) continue;
      const given = lane.idle.filter(({ at }) => which(lane, at));
      lane.idle = lane.idle.filter(({ at }) => !which(lane, at));
      this.idleCount -= given.length;
      for (const { holding } of given) this.give(holding);
    }
    if (this.idleCount > 0) this.armIdleTimer();
  }

  /** Gives back, IDLE_KEEP_MS on, the idle slots kept that long by then. */
  private armIdleTimer(): void {
    if (this.idleTimer || this.closed) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      const now = Date.now();
      this.releaseIdle((_lane, at) => now - at >= IDLE_KEEP_MS);
    }, IDLE_KEEP_MS);
    this.idleTimer.unref();
  }

  private give(entry: Holding): void {
    this.used--;
    this.released.push({ webhookId: entry.webhookId, token: entry.token });
    const lane = this.lanes.get(entry.webhookId);
    if (lane) {
      lane.busy--;
      lane.sending.delete(entry.id);
      // A slot of its own given back: its lane may ask again (the round gives it back first).
      lane.parked = false;
    }
    this.schedulePump();
  }

  /** A lane that let deliveries go takes them back from PostgreSQL once half drained. */
  private refill(webhookId: string, lane: Lane): void {
    const cap = this.limits.waitingPerWebhook;
    if (lane.refilling || this.closed || lane.waiting.size > cap / 2) return;
    lane.refilling = true;
    const limit = cap - lane.waiting.size;
    this.work
      .refill(webhookId, limit, [...lane.waiting, ...lane.sending])
      .then(
        (ids) => {
          if (ids.length < limit) lane.spilled = false;
          this.submit(ids.map((id) => ({ id, webhookId })));
        },
        // Still spilled: the next round that drains it tries again.
        () => undefined,
      )
      .finally(() => (lane.refilling = false));
  }

  /** Runs a round at `at` (the earliest of those asked for). */
  private wakeAt(at: number): void {
    if (this.closed || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        const now = Date.now();
        let next = Infinity;
        for (const lane of this.lanes.values()) {
          if (lane.parked && lane.lapseAt <= now) lane.parked = false;
          if (lane.parked) next = Math.min(next, lane.lapseAt);
          if (lane.wakeAt > now) next = Math.min(next, lane.wakeAt);
        }
        if (next !== Infinity) this.wakeAt(next);
        this.schedulePump();
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }
}
