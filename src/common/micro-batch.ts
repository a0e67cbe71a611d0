interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export interface MicroBatcherOptions<I> {
  /** Items with the same key never share a batch: a statement must not see one row twice. */
  keyOf?: (item: I) => string;
  maxSize?: number;
  /**
   * Runs in flight at once. While that many are, new items wait for one to end instead of
   * going out on the next turn: under load, batches grow (fewer statements and commits)
   * instead of statements piling up; alone, a call still waits for nothing but the current turn.
   */
  maxInFlight?: number;
  /**
   * How long the first item of a batch waits for others before the batch goes out (instead of
   * the next turn): for work whose cost is per run and whose caller does not wait on it.
   */
  lingerMs?: number;
}

/**
 * Gathers the calls made within one turn of the event loop (or within `lingerMs`, up to
 * `maxSize`) into one call of `run`, which answers each item in order with a value or an Error.
 * Under load this turns N round trips (and N commits) into one; alone, a call waits for nothing
 * but the current turn (or the linger).
 * Used on both hot paths: inbound inserts and job adds, and the dispatcher's fan-out, loads
 * and attempt records.
 */
export class MicroBatcher<I, O> {
  private pending: Pending<I, O>[] = [];
  private keys = new Set<string>();
  private scheduled = false;
  private readonly keyOf?: (item: I) => string;
  private readonly maxSize: number;
  private readonly maxInFlight: number;
  private readonly lingerMs: number;
  private inFlight = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<(O | Error)[]>,
    options: MicroBatcherOptions<I> = {},
  ) {
    this.keyOf = options.keyOf;
    this.maxSize = options.maxSize ?? 100;
    this.maxInFlight = options.maxInFlight ?? Infinity;
    this.lingerMs = options.lingerMs ?? 0;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const key = this.keyOf?.(item);
      if (key !== undefined) {
        if (this.keys.has(key)) this.flush();
        this.keys.add(key);
      }
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxSize) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        const due = () => {
          this.scheduled = false;
          if (this.inFlight < this.maxInFlight) this.flush();
        };
        if (this.lingerMs > 0) setTimeout(due, this.lingerMs);
        else setImmediate(due);
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.keys = new Set();
    this.inFlight++;
    this.run(batch.map((b) => b.item))
      .then(
        (results) =>
          batch.forEach((b, i) => {
            const result = results[i];
            if (result instanceof Error) b.reject(result);
            else b.resolve(result);
          }),
        (error: unknown) => batch.forEach((b) => b.reject(error)),
      )
      .finally(() => {
        this.inFlight--;
        // What gathered while the runs were busy goes out now, as one batch (once it has
        // lingered: until then it is still scheduled).
        if (!this.scheduled && this.inFlight < this.maxInFlight) this.flush();
      });
  }
}
