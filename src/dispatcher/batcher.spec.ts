import { Batcher } from './batcher';

describe('Batcher', () => {
  const recording = () => {
    const batches: number[][] = [];
    const batcher = new Batcher<number, string>(
      async (items) => {
        batches.push(items);
        return items.map((i) => `r${i}`);
      },
      (i) => String(i),
      3,
    );
    return { batches, batcher };
  };

  it('sends the calls of one turn together and answers each with its own result', async () => {
    const { batches, batcher } = recording();
    expect(await Promise.all([batcher.call(1), batcher.call(2)])).toEqual(['r1', 'r2']);
    expect(batches).toEqual([[1, 2]]);
  });

  it('caps the batch size', async () => {
    const { batches, batcher } = recording();
    await Promise.all([1, 2, 3, 4, 5].map((i) => batcher.call(i)));
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
  });

  it('never puts one key twice in a batch', async () => {
    const { batches, batcher } = recording();
    await Promise.all([batcher.call(1), batcher.call(2), batcher.call(1)]);
    expect(batches).toEqual([[1, 2], [1]]);
  });

  it('fails every call of a failed batch', async () => {
    const batcher = new Batcher<number, number>(async () => {
      throw new Error('database down');
    }, String);
    const results = await Promise.allSettled([batcher.call(1), batcher.call(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
