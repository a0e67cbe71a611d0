import type { LoggerService } from '@nestjs/common';
import type { Job } from 'bull';
import { jobRunner } from './job-runner';

function recordingLogger(): LoggerService & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => lines.push(`${level} ${message}`);
  return { lines, log: at('log'), warn: at('warn'), error: at('error') };
}

/** A Bull job on its `attempt`-th run of `attempts`, recording whether it was discarded. */
function jobOn(attempt: number, attempts: number): Job & { discarded: boolean } {
  const job = {
    id: 'j1',
    name: 'deliver',
    data: {},
    attemptsMade: attempt - 1,
    opts: { attempts },
    discarded: false,
    discard: () => {
      job.discarded = true;
    },
  };
  return job as unknown as Job & { discarded: boolean };
}

const failing = (error: Error) => async () => {
  throw error;
};

describe('jobRunner', () => {
  it('passes a success through and logs nothing', async () => {
    const logger = recordingLogger();
    const run = jobRunner(async () => 'done', {}, logger);
    await expect(run(jobOn(1, 4))).resolves.toBe('done');
    expect(logger.lines).toEqual([]);
  });

  it('logs a failure with attempts left as one that will retry, and rethrows it', async () => {
    const logger = recordingLogger();
    const onFinalFailure = jest.fn(async () => undefined);
    const run = jobRunner(failing(new Error('boom')), { onFinalFailure }, logger);
    const job = jobOn(2, 4);
    await expect(run(job)).rejects.toThrow('boom');
    expect(logger.lines).toEqual(['warn deliver job j1, attempt 2/4: boom; will retry']);
    expect(onFinalFailure).not.toHaveBeenCalled();
    expect(job.discarded).toBe(false);
  });

  it('logs the last attempt as final, saying what becomes of the work, and runs the hook', async () => {
    const logger = recordingLogger();
    const error = new Error('database down');
    const onFinalFailure = jest.fn(async () => undefined);
    const run = jobRunner(
      failing(error),
      { whenFinal: 'the sweeper queues it again', onFinalFailure },
      logger,
    );
    const job = jobOn(4, 4);
    await expect(run(job)).rejects.toBe(error);
    expect(logger.lines).toEqual([
      'error deliver job j1, attempt 4/4: database down; final for this job; the sweeper queues it again',
    ]);
    expect(onFinalFailure).toHaveBeenCalledWith(job, error);
  });

  it('logs a hook that fails too, and still fails the job with its own error', async () => {
    const logger = recordingLogger();
    const error = new Error('boom');
    const run = jobRunner(
      failing(error),
      { onFinalFailure: async () => Promise.reject(new Error('cannot record')) },
      logger,
    );
    await expect(run(jobOn(1, 1))).rejects.toBe(error);
    expect(logger.lines).toEqual([
      'error deliver job j1, attempt 1/1: boom; final for this job',
      'error deliver job j1: handling its final failure failed too: cannot record',
    ]);
  });
});
