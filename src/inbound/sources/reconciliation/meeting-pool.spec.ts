import { MeetingPool, meetingsInFlight } from './run-executor';

/** A task that ends when `release` is called, counting how many run at once. */
function gate(counter: { now: number; most: number }) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  const task = async () => {
    counter.now++;
    counter.most = Math.max(counter.most, counter.now);
    await done;
    counter.now--;
  };
  return { task, release };
}

describe('MeetingPool', () => {
  it('runs at most `size` tasks at once, and add waits for room', async () => {
    const pool = new MeetingPool(2);
    const counter = { now: 0, most: 0 };
    const [first, second] = [gate(counter), gate(counter)];
    await pool.add(first.task);
    let roomMade = false;
    const adding = pool.add(second.task).then(() => (roomMade = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect({ running: counter.now, roomMade }).toEqual({ running: 2, roomMade: false });
    first.release();
    await adding;
    expect(roomMade).toBe(true);
    second.release();
    await pool.drain();
    expect(counter).toEqual({ now: 0, most: 2 });
  });

  it('throws the first failure once the tasks under way have ended', async () => {
    const pool = new MeetingPool(4);
    const counter = { now: 0, most: 0 };
    const slow = gate(counter);
    await pool.add(slow.task);
    await pool.add(() => Promise.reject(new Error('platform unreachable')));
    let thrown: unknown = null;
    const drained = pool.drain().catch((error: unknown) => (thrown = error));
    expect(counter.now).toBe(1);
    slow.release();
    await drained;
    expect((thrown as Error).message).toBe('platform unreachable');
    expect(counter.now).toBe(0);
  });

  it('sizes itself from RECONCILE_MAX_RPS: half of it, from 1 to 16', () => {
    expect(meetingsInFlight(1)).toBe(1);
    expect(meetingsInFlight(20)).toBe(10);
    expect(meetingsInFlight(1000)).toBe(16);
  });
});
