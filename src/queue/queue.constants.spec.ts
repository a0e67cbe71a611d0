import { loadConfig } from '../config/load-config';
import {
  JITTERED_EXPONENTIAL,
  QUEUES,
  defaultJobOptions,
  queueOptions,
  retryDelayMs,
} from './queue.constants';

describe('retry policy', () => {
  it('doubles the delay for each retry', () => {
    const mid = () => 0.5;
    expect([1, 2, 3].map((n) => retryDelayMs(30000, n, mid))).toEqual([30000, 60000, 120000]);
  });

  it('keeps jitter within ±20%', () => {
    expect(retryDelayMs(1000, 1, () => 0)).toBe(800);
    expect(retryDelayMs(1000, 1, () => 0.999999)).toBe(1200);
  });

  it('gives deliveries one attempt more than DELIVERY_MAX_RETRIES', () => {
    const options = defaultJobOptions(loadConfig({ DELIVERY_MAX_RETRIES: '3' }));
    expect(options[QUEUES.deliveries].attempts).toBe(4);
    expect(
      defaultJobOptions(loadConfig({ DELIVERY_MAX_RETRIES: '0' }))[QUEUES.deliveries].attempts,
    ).toBe(1);
  });

  it('backs off by the jittered doubling', () => {
    const config = loadConfig({ DELIVERY_BACKOFF_MS: '1000' });
    const backoff = queueOptions(config, QUEUES.deliveries).settings!.backoffStrategies![
      JITTERED_EXPONENTIAL
    ];
    const third = backoff(3, new Error('database down'));
    expect(third).toBeGreaterThanOrEqual(3200);
    expect(third).toBeLessThanOrEqual(4800);
  });
});
