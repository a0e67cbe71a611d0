/**
 * The attempts one worker process has in flight (DELIVERY_CONCURRENCY at most), shared by all
 * its delivery jobs: a job takes slots before it claims deliveries, so it never leases more
 * than this process can send at once, and gives each back when that request is over.
 */
export class DeliverySlots {
  private used = 0;
  private waiting: (() => void)[] = [];

  constructor(readonly capacity: number) {}

  /**
   * Waits until `atLeast` slots are free (or `wanted`, if fewer), so that claims come in a few
   * large statements rather than one per freed slot; then takes up to `wanted` and resolves to
   * how many it took.
   */
  async take(wanted: number, atLeast = 1): Promise<number> {
    const needed = Math.min(atLeast, wanted, this.capacity);
    while (this.capacity - this.used < needed) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    const taken = Math.min(wanted, this.capacity - this.used);
    this.used += taken;
    return taken;
  }

  give(count = 1): void {
    if (count <= 0) return;
    this.used -= count;
    // Every waiter looks again; those still short of slots wait once more.
    for (const wake of this.waiting.splice(0)) wake();
  }
}
