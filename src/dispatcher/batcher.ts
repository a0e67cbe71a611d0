interface Pending<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the calls made during one turn of the event loop into a single call of `run`, so
 * many concurrent jobs share one database round trip. An idle worker pays no wait (the batch
 * goes out on setImmediate, usually holding one item); a busy one sends larger batches.
 * Items with the same key never share a batch: a statement must not see one row twice.
 */
export class Batcher<I, O> {
  private pending: Pending<I, O>[] = [];
  private keys = new Set<string>();
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly keyOf: (item: I) => string,
    private readonly maxSize = 100,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const key = this.keyOf(item);
      if (this.keys.has(key)) this.flush();
      this.pending.push({ item, resolve, reject });
      this.keys.add(key);
      if (this.pending.length >= this.maxSize) {
        this.flush();
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.keys = new Set();
    this.run(batch.map((p) => p.item)).then(
      (results) => batch.forEach((p, i) => p.resolve(results[i])),
      (error: unknown) => batch.forEach((p) => p.reject(error)),
    );
  }
}
