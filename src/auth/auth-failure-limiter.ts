import { HttpStatus, Injectable } from '@nestjs/common';
import ipaddr from 'ipaddr.js';
import { createHmac, randomBytes } from 'node:crypto';
import { ApiError } from '../common/api-error';

/** A caller may fail this many authentications of one client id within the window before it gets 429. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 60_000;
/** Bounds memory when many distinct callers fail (e.g. one attacker rotating addresses). */
export const MAX_TRACKED_CALLERS = 10_000;
/** An address may fail this many times within the window, whatever client ids it names. */
export const ADDRESS_FAILURE_BUDGET = 50;
/** Cells per row of the address table (two rows; see AddressBudget). */
export const ADDRESS_SLOTS = 2 ** 15;

/**
 * Counts failed client authentications (POST /oauth/token, the queue dashboard) over a
 * window, so that client secrets cannot be guessed at speed. Successful authentications are
 * not counted. Two limits apply, and a caller is blocked (429, even for the right secret)
 * while either is spent:
 *
 * - per client id and address, MAX_FAILURES in a sliding window: the precise limit, kept
 *   in a table that evicts its stalest caller when full;
 * - per address, ADDRESS_FAILURE_BUDGET, in a fixed-size table that nothing is ever evicted
 *   from. Without it, one address could fail with 10,000 junk client ids to push its own
 *   lockout out of the first table and guess again; with it, those junk ids are refused
 *   once the budget is spent, and guessing from an address stays bounded whatever it does.
 *
 * IPv6 addresses count by their /64 prefix (one subscriber usually holds all of it) and
 * IPv4-mapped IPv6 addresses as their IPv4 address.
 *
 * The state lives in this process's memory: with N API replicas a caller gets up to N times
 * the budget, and a restart forgets it. That is enough against guessing, since client secrets
 * are at least 16 characters; a shared limit would put Redis on the token path.
 */
@Injectable()
export class AuthFailureLimiter {
  // key → times of its most recent failures (at most MAX_FAILURES), oldest first.
  private readonly failures = new Map<string, number[]>();
  private readonly addresses = new AddressBudget();
  private lastSweep = Date.now();

  /** Whole seconds until `clientId` may be tried again from `ip`; 0 when it may be now. */
  retryAfterSeconds(clientId: string, ip: string): number {
    const address = addressOf(ip);
    const now = Date.now();
    const wait = Math.max(
      this.addresses.waitMs(address, now),
      this.callerWaitMs(callerKey(clientId, address), now),
    );
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : 0;
  }

  /** 429 with Retry-After while the caller is blocked; check it before looking at the secret. */
  assertMayTry(clientId: string, ip: string): void {
    const wait = this.retryAfterSeconds(clientId, ip);
    if (wait > 0) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        `Too many failed authentication attempts; retry after ${wait} s`,
        { headers: { 'retry-after': String(wait) } },
      );
    }
  }

  /** How many client id and address pairs are being tracked (at most MAX_TRACKED_CALLERS). */
  get trackedCallers(): number {
    return this.failures.size;
  }

  recordFailure(clientId: string, ip: string): void {
    const now = Date.now();
    const address = addressOf(ip);
    this.addresses.record(address, now);
    this.sweep(now);
    const key = callerKey(clientId, address);
    const times = (this.failures.get(key) ?? []).filter((t) => t > now - FAILURE_WINDOW_MS);
    times.push(now);
    if (times.length > MAX_FAILURES) times.shift();
    // Re-inserting moves the key to the end, so eviction below drops the stalest caller.
    this.failures.delete(key);
    this.failures.set(key, times);
    if (this.failures.size > MAX_TRACKED_CALLERS) {
      const stalest = this.failures.keys().next().value;
      if (stalest !== undefined) this.failures.delete(stalest);
    }
  }

  private callerWaitMs(key: string, now: number): number {
    const times = this.failures.get(key);
    if (!times || times.length < MAX_FAILURES) return 0;
    return times[0] + FAILURE_WINDOW_MS - now;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < FAILURE_WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, times] of this.failures) {
      if (times[times.length - 1] <= now - FAILURE_WINDOW_MS) this.failures.delete(key);
    }
  }
}

const callerKey = (clientId: string, address: string) => `${clientId}\n${address}`;

/** The unit an address budget is kept for: an IPv4 address, or an IPv6 /64 prefix. */
export function addressOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(':')}::/64`;
}

const ROWS = 2;

/**
 * Failures per address in fixed memory: a count-min sketch of ROWS rows of ADDRESS_SLOTS
 * cells, each cell a count and the start of its window. An address maps to one cell per row
 * by an HMAC under a key drawn at start, so nobody can choose addresses that share cells with
 * another; its count is the smallest of its cells. Addresses that share a cell in every row
 * share a budget, which errs toward blocking, never toward letting a guess through. With K
 * addresses spending their whole budget at once, an unrelated address finds its cells spent
 * with odds of about (K / ADDRESS_SLOTS)², 0.1 % for K = 1,000. The table takes ~640 KiB.
 */
class AddressBudget {
  private readonly key = randomBytes(32);
  private readonly counts = new Uint16Array(ROWS * ADDRESS_SLOTS);
  private readonly windowStarts = new Float64Array(ROWS * ADDRESS_SLOTS);

  /** Milliseconds until `address` may fail again; 0 or less when it may now. */
  waitMs(address: string, now: number): number {
    let wait = Infinity;
    for (const cell of this.cells(address)) {
      const left = this.spent(cell, now) ? this.windowStarts[cell] + FAILURE_WINDOW_MS - now : 0;
      wait = Math.min(wait, left);
    }
    return wait;
  }

  record(address: string, now: number): void {
    for (const cell of this.cells(address)) {
      if (this.windowStarts[cell] + FAILURE_WINDOW_MS <= now) {
        this.windowStarts[cell] = now;
        this.counts[cell] = 0;
      }
      if (this.counts[cell] < ADDRESS_FAILURE_BUDGET) this.counts[cell]++;
    }
  }

  private spent(cell: number, now: number): boolean {
    return (
      this.counts[cell] >= ADDRESS_FAILURE_BUDGET &&
      this.windowStarts[cell] + FAILURE_WINDOW_MS > now
    );
  }

  private cells(address: string): number[] {
    const digest = createHmac('sha256', this.key).update(address).digest();
    return Array.from(
      { length: ROWS },
      (_, row) => row * ADDRESS_SLOTS + (digest.readUInt32BE(row * 4) % ADDRESS_SLOTS),
    );
  }
}
