import { queueStateOf } from './deliveries.sweeper';

describe('queueStateOf', () => {
  it('re-queues a delivery the queue does not hold', () => {
    expect(queueStateOf(null)).toBe('missing');
  });

  it('treats a finished job (completed or failed for good) as stale', () => {
    expect(queueStateOf({ finishedOn: 1735725605123 })).toBe('finished');
  });

  it('leaves waiting, delayed and active jobs alone', () => {
    expect(queueStateOf({ finishedOn: undefined })).toBe('queued');
  });
});
