import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('gives the value of a promise that settles in time, and leaves no timer behind', async () => {
    await expect(withTimeout(Promise.resolve(42), 1000, 'too slow')).resolves.toBe(42);
    expect(jest.getTimerCount()).toBe(0);
  });

  it("passes on the promise's own rejection, and leaves no timer behind", async () => {
    const failing = Promise.reject(new Error('connection refused'));
    await expect(withTimeout(failing, 1000, 'too slow')).rejects.toThrow('connection refused');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects with the message once the time is up, not before', async () => {
    let settled = false;
    const never = new Promise<number>(() => undefined);
    const waiting = withTimeout(never, 1000, 'no answer within 1000 ms');
    waiting.catch(() => (settled = true));
    await jest.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    await expect(waiting).rejects.toThrow('no answer within 1000 ms');
  });
});
