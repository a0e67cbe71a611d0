/**
 * Gathers the calls made within one turn of the event loop (up to `maxSize`) into one call of
 * `run`, which answers each item in order with a value or an Error. Under load this turns N
 * round trips (and N commits) into one; alone, a call waits for nothing but the current turn.
 */
export class MicroBatcher<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: Error) => void }[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<(O | Error)[]>,
    private readonly maxSize = 100,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxSize) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    this.run(batch.map((b) => b.item)).then(
      (results) =>
        batch.forEach((b, i) => {
          const result = results[i];
          if (result instanceof Error) b.reject(result);
          else b.resolve(result);
        }),
      (error: Error) => batch.forEach((b) => b.reject(error)),
    );
  }
}
