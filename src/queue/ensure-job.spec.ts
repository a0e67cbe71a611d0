import { queueStateOf } from './ensure-job';

describe('queueStateOf', () => {
  it('calls a job the queue does not hold missing', () => {
    expect(queueStateOf(null)).toBe('missing');
  });

  it('treats a finished job (completed or failed for good) as stale', () => {
    expect(queueStateOf({ finishedOn: 1735725605123 })).toBe('finished');
  });

  it('leaves waiting, delayed and active jobs alone', () => {
    expect(queueStateOf({ finishedOn: undefined })).toBe('queued');
  });
});
