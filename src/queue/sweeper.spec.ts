import { Logger } from '@nestjs/common';
import { Counter, Registry } from 'prom-client';
import { Sweeper } from './sweeper';

const INTERVAL_MS = 1000;

/** A sweeper whose sweeps the test starts (timer) and ends (settle) by hand. */
class ManualSweeper extends Sweeper {
  sweeps = 0;
  private settle: ((queued: number | Error) => void) | undefined;

  constructor(requeued: Counter) {
    super({ what: 'test jobs', intervalMs: INTERVAL_MS, requeued });
  }

  sweep(): Promise<number> {
    this.sweeps++;
    return new Promise((resolve, reject) => {
      this.settle = (outcome) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
    });
  }

  finish(outcome: number | Error): void {
    this.settle?.(outcome);
    this.settle = undefined;
  }
}

describe('Sweeper', () => {
  let registry: Registry;
  let requeued: Counter;
  let sweeper: ManualSweeper;
  let warn: jest.SpyInstance;
  let error: jest.SpyInstance;
  const flush = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  const counted = async () => (await requeued.get()).values[0]?.value ?? 0;

  beforeEach(() => {
    jest.useFakeTimers();
    registry = new Registry();
    requeued = new Counter({ name: 'requeued_total', help: 'test', registers: [registry] });
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    sweeper = new ManualSweeper(requeued);
    sweeper.onApplicationBootstrap();
  });
  afterEach(async () => {
    sweeper.finish(0);
    await sweeper.onModuleDestroy();
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('sweeps every interval, one sweep at a time', async () => {
    expect(sweeper.sweeps).toBe(0);
    jest.advanceTimersByTime(INTERVAL_MS);
    expect(sweeper.sweeps).toBe(1);
    // A slow sweep is not overlapped by the next one.
    jest.advanceTimersByTime(5 * INTERVAL_MS);
    expect(sweeper.sweeps).toBe(1);
    sweeper.finish(0);
    await flush();
    jest.advanceTimersByTime(INTERVAL_MS);
    expect(sweeper.sweeps).toBe(2);
  });

  it('logs and counts what a sweep really re-queued, and is silent when it was nothing', async () => {
    jest.advanceTimersByTime(INTERVAL_MS);
    sweeper.finish(0);
    await flush();
    expect(warn).not.toHaveBeenCalled();
    jest.advanceTimersByTime(INTERVAL_MS);
    sweeper.finish(3);
    await flush();
    expect(warn).toHaveBeenCalledWith('re-queued 3 test jobs that the queue did not hold');
    expect(await counted()).toBe(3);
  });

  it('logs a failed sweep and sweeps again at the next interval', async () => {
    jest.advanceTimersByTime(INTERVAL_MS);
    sweeper.finish(new Error('database down'));
    await flush();
    expect(error).toHaveBeenCalledWith(
      `sweep for test jobs failed: database down; next sweep in ${INTERVAL_MS} ms`,
    );
    jest.advanceTimersByTime(INTERVAL_MS);
    expect(sweeper.sweeps).toBe(2);
  });

  it('waits on shutdown for the sweep running, and starts no other', async () => {
    jest.advanceTimersByTime(INTERVAL_MS);
    let stopped = false;
    const stopping = sweeper.onModuleDestroy().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    sweeper.finish(0);
    await stopping;
    jest.advanceTimersByTime(10 * INTERVAL_MS);
    expect(sweeper.sweeps).toBe(1);
  });
});
