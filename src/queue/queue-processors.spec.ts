import type { Queue } from 'bull';
import { QueueProcessors } from './queue-processors';

/** Only what QueueProcessors uses of a Bull queue: its name, process() and pause(). */
function queueWhose(
  name: string,
  process: () => Promise<void>,
  pause: (isLocal?: boolean) => Promise<void> = async () => undefined,
): Queue {
  return { name, process, pause } as unknown as Queue;
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('QueueProcessors', () => {
  it('reports a processor whose start-up failed, with the reason', async () => {
    const processors = new QueueProcessors();
    processors.start(
      queueWhose('deliveries', () => Promise.reject(new Error('NOPERM no channel'))),
      'deliver',
      2,
      async () => undefined,
    );
    processors.start(
      queueWhose('inbound', () => new Promise(() => undefined)),
      'process-inbound',
      2,
      async () => undefined,
    );
    await settle();
    expect(processors.failures()).toEqual(['deliveries processor stopped: NOPERM no channel']);
  });

  it('reports nothing while the processors run', async () => {
    const processors = new QueueProcessors();
    processors.start(
      queueWhose('deliveries', () => new Promise(() => undefined)),
      'deliver',
      2,
      async () => undefined,
    );
    await settle();
    expect(processors.failures()).toEqual([]);
  });

  it('ignores a processor stopped by the shutdown', async () => {
    const processors = new QueueProcessors();
    let reject: (error: Error) => void = () => undefined;
    processors.start(
      queueWhose('deliveries', () => new Promise((_, r) => (reject = r))),
      'deliver',
      2,
      async () => undefined,
    );
    const shutdown = processors.beforeApplicationShutdown();
    reject(new Error('Connection is closed.'));
    await shutdown;
    await settle();
    expect(processors.failures()).toEqual([]);
  });

  it('takes no new jobs on shutdown: pauses each queue it works, in this process only', async () => {
    const processors = new QueueProcessors();
    const paused: string[] = [];
    let drained: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (drained = resolve));
    for (const name of ['deliveries', 'inbound']) {
      const queue = queueWhose(
        name,
        () => new Promise(() => undefined),
        async (isLocal) => {
          paused.push(`${name} local=${isLocal}`);
          await inFlight;
        },
      );
      processors.start(queue, 'job', 1, async () => undefined);
    }
    let done = false;
    const shutdown = processors.beforeApplicationShutdown().then(() => (done = true));
    await settle();
    expect(paused).toEqual(['deliveries local=true', 'inbound local=true']);
    // Bull's local pause settles once the jobs in flight are done; shutdown waits for that.
    expect(done).toBe(false);
    drained();
    await shutdown;
    expect(done).toBe(true);
  });

  it('lets a programming error (a handler defined twice) fail the bootstrap', () => {
    const processors = new QueueProcessors();
    const twice = queueWhose('deliveries', () => {
      throw new Error('Cannot define the same handler twice deliver');
    });
    expect(() => processors.start(twice, 'deliver', 2, async () => undefined)).toThrow(
      /same handler twice/,
    );
  });
});
