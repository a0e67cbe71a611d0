import type { Holding, Lane } from './lanes';

/**
 * How long a slot whose lane has nothing left to send is kept for the webhook's next delivery
 * before it goes back. Under a steady flow the lane empties between deliveries that come a
 * fraction of a millisecond apart; giving the slot back and asking for it again then costs two
 * rounds per delivery, each a script in Redis and a turn of this process. Short enough that a
 * process waiting for the slot (which this one learns only at its next round) hardly notices.
 */
export const IDLE_KEEP_MS = 50;

/** What the idle slots need of the scheduler that holds them. */
export interface IdleHost {
  lanes(): Iterable<Lane>;
  /** Deliveries waiting in every lane. */
  waitingTotal(): number;
  closed(): boolean;
  /** Gives a slot back to WebhookSlots in the next round. */
  give(holding: Holding): void;
  /** Sends the next delivery waiting in `lane` on a slot this process holds. */
  startOn(holding: Holding, lane: Lane): void;
}

/**
 * Slots kept, with nothing to send on them, for IDLE_KEEP_MS (each lane's `idle`): the
 * webhook's next delivery then takes one with no round.
 */
export class IdleSlots {
  private timer: NodeJS.Timeout | null = null;
  /** Lanes with idle slots given deliveries in this submit. */
  private readonly offeredTo = new Set<Lane>();
  /** Idle slots in all lanes. */
  private count = 0;

  constructor(private readonly host: IdleHost) {}

  /** A delivery came to `lane`: an idle slot of its takes it at use(). */
  offered(lane: Lane): void {
    if (lane.idle.length > 0) this.offeredTo.add(lane);
  }

  /**
   * Keeps the slot of an attempt that is over, with nothing left in its lane. Not while another
   * process is known to wait for the webhook's slots, nor while other lanes wait (the slot
   * counts against this process's capacity).
   */
  keep(entry: Holding, lane: Lane): boolean {
    if (lane.contendedUntil > Date.now() || this.host.waitingTotal() > 0) return false;
    lane.sending.delete(entry.id);
    // The delivery it served is over: nothing of it stays with the slot.
    lane.idle.push({ holding: { ...entry, id: '' }, at: Date.now() });
    this.count++;
    this.arm();
    return true;
  }

  /** Idle slots go to the deliveries now waiting in their lanes; the rest back if others wait. */
  use(): void {
    for (const lane of this.offeredTo) {
      while (lane.idle.length > 0 && lane.waiting.size > 0) {
        this.count--;
        this.host.startOn(lane.idle.pop()!.holding, lane);
      }
    }
    this.offeredTo.clear();
    if (this.host.waitingTotal() > 0 && this.count > 0) this.release(() => true);
  }

  /** Gives back the idle slots `which` selects; re-arms the timer for those left. */
  release(which: (lane: Lane, at: number) => boolean): void {
    if (this.count === 0) return;
    for (const lane of this.host.lanes()) {
      if (lane.idle.length === 0) continue;
      const given = lane.idle.filter(({ at }) => which(lane, at));
      lane.idle = lane.idle.filter(({ at }) => !which(lane, at));
      this.count -= given.length;
      for (const { holding } of given) this.host.give(holding);
    }
    if (this.count > 0) this.arm();
  }

  /** At close: every idle slot back, no timer left. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.release(() => true);
  }

  /** Gives back, IDLE_KEEP_MS on, the idle slots kept that long by then. */
  private arm(): void {
    if (this.timer || this.host.closed()) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      const now = Date.now();
      this.release((_lane, at) => now - at >= IDLE_KEEP_MS);
    }, IDLE_KEEP_MS);
    this.timer.unref();
  }
}
