import { MicroBatcher, MicroBatcherOptions } from './micro-batch';

/** A batcher whose runs are recorded and end only when released, in order. */
function gatedBatcher(options: MicroBatcherOptions<number>) {
  const batches: number[][] = [];
  const release: (() => void)[] = [];
  const batcher = new MicroBatcher<number, number>((items) => {
    batches.push(items);
    return new Promise((resolve) => release.push(() => resolve(items)));
  }, options);
  return { batcher, batches, release };
}

describe('MicroBatcher', () => {
  it('runs the calls of one turn as one batch and answers each in order', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>((items) => {
      batches.push(items);
      return Promise.resolve(items.map((n) => n * 10));
    });
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(await batcher.submit(4)).toBe(40);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('splits at maxSize', async () => {
    const sizes: number[] = [];
    const batcher = new MicroBatcher<number, number>(
      (items) => {
        sizes.push(items.length);
        return Promise.resolve(items);
      },
      { maxSize: 2 },
    );
    await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('rejects only the items answered with an Error, and all of a failed batch', async () => {
    const perItem = new MicroBatcher<number, number>((items) =>
      Promise.resolve(items.map((n) => (n === 2 ? new Error('bad 2') : n))),
    );
    const settled = await Promise.allSettled([1, 2, 3].map((n) => perItem.submit(n)));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);

    const failing = new MicroBatcher<number, number>(() => Promise.reject(new Error('down')));
    const all = await Promise.allSettled([1, 2].map((n) => failing.submit(n)));
    expect(all).toEqual([
      { status: 'rejected', reason: new Error('down') },
      { status: 'rejected', reason: new Error('down') },
    ]);
  });

  it('never puts one key twice in a batch', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>(
      (items) => {
        batches.push(items);
        return Promise.resolve(items);
      },
      { keyOf: String },
    );
    await Promise.all([1, 2, 1].map((n) => batcher.submit(n)));
    expect(batches).toEqual([[1, 2], [1]]);
  });

  it('with maxInFlight, gathers what arrives while runs are busy into one batch', async () => {
    const { batcher, batches, release } = gatedBatcher({ maxInFlight: 1 });
    const first = batcher.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((n) => batcher.submit(n));
    await new Promise((resolve) => setImmediate(resolve));
    // The first run is still busy: 2, 3 and 4 wait for it instead of going out alone.
    expect(batches).toEqual([[1]]);
    release[0]();
    expect(await first).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    release[1]();
    expect(await Promise.all(later)).toEqual([2, 3, 4]);
  });

  describe('with lingerMs', () => {
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('holds a batch open for lingerMs after its first item, then runs it once', async () => {
      const batches: number[][] = [];
      const batcher = new MicroBatcher<number, number>(
        (items) => {
          batches.push(items);
          return Promise.resolve(items);
        },
        { lingerMs: 10 },
      );
      const first = batcher.submit(1);
      await jest.advanceTimersByTimeAsync(9);
      const second = batcher.submit(2);
      await jest.advanceTimersByTimeAsync(0);
      // Turns have passed (advanceTimersByTimeAsync awaits between them), the batch has not.
      expect(batches).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([[1, 2]]);
      expect(await Promise.all([first, second])).toEqual([1, 2]);
    });

    it('lets what gathered during a busy run linger too, not go out as the run ends', async () => {
      const { batcher, batches, release } = gatedBatcher({ lingerMs: 10, maxInFlight: 1 });
      const first = batcher.submit(1);
      await jest.advanceTimersByTimeAsync(10);
      expect(batches).toEqual([[1]]);
      const second = batcher.submit(2);
      release[0]();
      expect(await first).toBe(1);
      await jest.advanceTimersByTimeAsync(9);
      expect(batches).toEqual([[1]]);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches).toEqual([[1], [2]]);
      release[1]();
      expect(await second).toBe(2);
    });
  });
});
