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

/** A lane that may ask for slots in this round. */
export interface OpenLane {
  /** Slots it could use: its waiting deliveries, up to its webhook's max_in_flight. */
  room: number;
  /** Slots of its webhook this process holds. */
  busy: number;
  /** Set here: the slots it asks for. */
  want: number;
}

/**
 * Hands `free` slots of this process to the open lanes (in the order given, which rotates by
 * round), one to each in turn, round and round: fair when this process's slots are few. The
 * last `reserve` free slots go one each to lanes holding none (RESERVE_DIVISOR).
 */
export function shareCapacity(open: OpenLane[], free: number, reserve: number): void {
  const mayTake = (entry: OpenLane) =>
    free > 0 && entry.want < entry.room && (free > reserve || entry.busy + entry.want === 0);
  let asking = open.filter(mayTake);
  while (free > 0 && asking.length > 0) {
    for (const entry of asking) {
      if (!mayTake(entry)) continue;
      entry.want++;
      free--;
    }
    asking = asking.filter(mayTake);
  }
}
