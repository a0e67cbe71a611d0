import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';

/** A caller may fail this many authentications within the window before it gets 429. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 60_000;
/** Bounds memory when many distinct callers fail (e.g. one attacker rotating addresses). */
export const MAX_TRACKED_CALLERS = 10_000;

/**
 * Counts failed client authentications (POST /oauth/token, the queue dashboard) per caller key (client id and
 * IP address) over a sliding window, so that client secrets cannot be guessed at speed.
 * Successful authentications are not counted.
 *
 * The state lives in this process's memory: with N API replicas a caller gets up to N times
 * the budget, and a restart forgets it. That is enough against guessing, since client secrets
 * are at least 16 characters; a shared limit would put Redis on the token path.
 */
@Injectable()
export class AuthFailureLimiter {
  // key → times of its most recent failures (at most MAX_FAILURES), oldest first.
  private readonly failures = new Map<string, number[]>();
  private lastSweep = Date.now();

  /** Whole seconds until `key` may try again; 0 when it may try now. */
  retryAfterSeconds(key: string): number {
    const times = this.failures.get(key);
    if (!times || times.length < MAX_FAILURES) return 0;
    const wait = times[0] + FAILURE_WINDOW_MS - Date.now();
    if (wait <= 0) return 0;
    return Math.max(1, Math.ceil(wait / 1000));
  }

  /** 429 with Retry-After while `key` is blocked; check it before looking at the credentials. */
  assertMayTry(key: string): void {
    const wait = this.retryAfterSeconds(key);
    if (wait > 0) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        `Too many failed authentication attempts; retry after ${wait} s`,
        { headers: { 'retry-after': String(wait) } },
      );
    }
  }

  /** How many callers are being tracked (bounded by MAX_TRACKED_CALLERS). */
  get trackedCallers(): number {
    return this.failures.size;
  }

  recordFailure(key: string): void {
    const now = Date.now();
    this.sweep(now);
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

  private sweep(now: number): void {
    if (now - this.lastSweep < FAILURE_WINDOW_MS) return;
    this.lastSweep = now;
    for (const [key, times] of this.failures) {
      if (times[times.length - 1] <= now - FAILURE_WINDOW_MS) this.failures.delete(key);
    }
  }
}
