import type { WebhookLimit } from '../../../delivery-record/delivery.store';
import type { SlotAnswer, SlotRequest, SlotToken, WebhookSlots } from '../webhook-slots';
import { OpenLane, reservedSlots, shareCapacity } from './fairness';
import { IdleSlots } from './idle-slots';
import { Holding, Lane, newLane } from './lanes';
import { LIMITS_TTL_MS, LimitCache } from './limit-cache';
import { refill } from './refill';
import type { ScheduledDelivery, SchedulerLimits, SchedulerWork } from './scheduler-work';

/*
 * The delivery scheduler: how a delivery goes from "ready" to "being sent" (docs/api.md#receiver-health).
 *
 * The plug-in points (scheduler-work.ts):
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
 *
 * This file runs the slot rounds; beside it: the waiting lines (lanes.ts), the share of this
 * process's slots between webhooks (fairness.ts), slots kept idle for a webhook's next delivery
 * (idle-slots.ts), a backlog let go and read back (refill.ts), the webhooks' limits
 * (limit-cache.ts).
 */

/** After WebhookSlots failed (Redis unreachable), the next try. */
const SLOTS_RETRY_MS = 1000;

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
  private readonly limitCache: LimitCache;
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
  private readonly idle: IdleSlots;
  /** Where the next round starts handing out this process's capacity. */
  private turn = 0;

  constructor(
    private readonly limits: SchedulerLimits,
    defaults: WebhookLimit,
    private readonly slots: WebhookSlots,
    private readonly work: SchedulerWork,
  ) {
    this.reserve = reservedSlots(limits.capacity);
    this.limitCache = new LimitCache(work, defaults);
    this.idle = new IdleSlots({
      lanes: () => this.lanes.values(),
      waitingTotal: () => this.waitingTotal,
      closed: () => this.closed,
      give: (holding) => this.give(holding),
      startOn: (holding, lane) => this.startOn(holding, lane),
    });
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
      this.idle.offered(lane);
      if (lane.waiting.has(delivery.id) || lane.sending.has(delivery.id)) continue;
      if (lane.waiting.size >= this.limits.waitingPerWebhook) {
        lane.spilled = true;
        spilled.push(delivery);
        continue;
      }
      lane.waiting.add(delivery.id);
      this.waitingTotal++;
    }
    this.idle.use();
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
    this.idle.close();
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
      lane = newLane();
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
    const free = this.limits.capacity - this.used;
    if (free <= 0) return [];
    const open: (OpenLane & { webhookId: string; limit: WebhookLimit })[] = [];
    const unknown: string[] = [];
    const stale: string[] = [];
    const entries = [...this.lanes];
    for (let i = 0; i < entries.length; i++) {
      const [webhookId, lane] = entries[(i + this.turn) % entries.length];
      if (lane.waiting.size === 0) {
        if (lane.busy === 0 && !lane.spilled) this.lanes.delete(webhookId);
        continue;
      }
      const cached = this.limitCache.entry(webhookId);
      if (!cached) {
        unknown.push(webhookId);
        continue;
      }
      if (now - cached.at > LIMITS_TTL_MS) stale.push(webhookId);
      if (lane.parked || lane.wakeAt > now) continue;
      const room = Math.min(cached.limit.maxInFlight - lane.busy, lane.waiting.size);
      if (room > 0) open.push({ webhookId, busy: lane.busy, room, want: 0, limit: cached.limit });
    }
    if (open.length > 0) this.turn++;
    if (unknown.length > 0 || stale.length > 0) this.loadLimits(unknown.concat(stale));
    shareCapacity(open, free, this.reserve);
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
      const limit = this.limitCache.limit(webhookId);
      if (!limit || lane.waiting.size === 0 || lane.parked || lane.wakeAt > now) continue;
      if (lane.busy < limit.maxInFlight) return true;
    }
    return false;
  }

  private loadLimits(webhookIds: string[]): void {
    this.limitCache.load(
      webhookIds,
      // Webhooks no longer scheduled here are forgotten, so a deleted one leaves nothing.
      (id) => this.lanes.has(id),
      (error) => {
        this.work.slotsFailed(error, SLOTS_RETRY_MS);
        this.wakeAt(Date.now() + SLOTS_RETRY_MS);
      },
      () => this.schedulePump(),
    );
  }

  private granted(requests: SlotRequest[], { grants, contended }: SlotAnswer): void {
    const now = Date.now();
    for (const webhookId of contended) {
      const lane = this.lanes.get(webhookId);
      if (lane) lane.contendedUntil = now + CONTENDED_MS;
    }
    if (contended.length > 0) this.idle.release((lane) => lane.contendedUntil > now);
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
    const limit = this.limitCache.limit(entry.webhookId);
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
    if (lane.waiting.size === 0) return this.idle.keep(entry, lane);
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
    if (this.closed) return;
    refill(lane, webhookId, this.limits.waitingPerWebhook, this.work, (ids) => this.submit(ids));
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
