/** A webhook's waiting line in this process, and the slots of the webhook it holds. */
export interface Lane {
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
  /** Slots kept with no attempt on them (idle-slots.ts), with when each became idle. */
  idle: { holding: Holding; at: number }[];
}

/** A delivery holding a slot, from the grant until its attempt's request is over. */
export interface Holding {
  id: string;
  webhookId: string;
  token: string;
  /** When the slot was taken from WebhookSlots (kept slots keep it). */
  since: number;
  /** When its lease was last started (taken or renewed), as far as this process knows. */
  leasedAt: number;
}

export function newLane(): Lane {
  return {
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
}
