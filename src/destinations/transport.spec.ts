import { Deadline, beforeDeadline } from './transport';

describe('Deadline', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('passes DELIVERY_TIMEOUT_MS after it was made, and says how long is left', () => {
    const deadline = new Deadline(300);
    expect(deadline.at).toBe(1_000_300);
    jest.advanceTimersByTime(100);
    expect(deadline.remainingMs()).toBe(200);
    expect(deadline.passed).toBe(false);
    jest.advanceTimersByTime(200);
    expect(deadline.passed).toBe(true);
    expect(deadline.remainingMs()).toBe(0);
  });

  it('counts as passed once a timer of its steps fired, whatever Date.now() says', () => {
    const deadline = new Deadline(300);
    deadline.expire();
    expect(deadline.remainingMs()).toBe(300);
    expect(deadline.passed).toBe(true);
  });
});

describe('beforeDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers with the work when it ends in time, and clears its timer', async () => {
    await expect(beforeDeadline(Promise.resolve('done'), new Deadline(300))).resolves.toBe('done');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects when the deadline passes first, at the time the deadline had left', async () => {
    const deadline = new Deadline(300);
    jest.advanceTimersByTime(200);
    const settled = jest.fn();
    const waiting = beforeDeadline(new Promise(() => undefined), deadline).catch((e: Error) => {
      settled(e.message);
    });
    await jest.advanceTimersByTimeAsync(99);
    expect(settled).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    await waiting;
    expect(settled).toHaveBeenCalledWith('deadline passed');
    expect(deadline.passed).toBe(true);
  });
});
