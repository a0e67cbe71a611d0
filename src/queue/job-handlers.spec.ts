import { getQueueToken } from '@nestjs/bull';
import { Injectable, Provider, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Job, Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { loadConfig } from '../config/load-config';
import { JobHandlers } from './job-handlers';
import { OnJob } from './on-job.decorator';
import { JOBS, QUEUES } from './queue.constants';
import { QueueProcessors } from './queue-processors';

@Injectable()
class Deliverer {
  readonly seen: unknown[] = [];
  @OnJob({
    queue: QUEUES.deliveries,
    job: JOBS.deliver,
    concurrency: (config) => config.delivery.concurrency,
  })
  async deliver(job: Job<{ id: string }>): Promise<string> {
    this.seen.push(job.data);
    return `delivered ${job.data.id}`;
  }
}

@Injectable()
class SecondDeliverer {
  @OnJob({ queue: QUEUES.deliveries, job: JOBS.deliver, concurrency: 1 })
  async handle(): Promise<void> {}
}

@Injectable()
class InboundWorker {
  // Not a handler: discovery must look at decorated methods only.
  async helper(): Promise<void> {}

  @OnJob({ queue: QUEUES.inbound, job: JOBS.processInbound, concurrency: 20 })
  async process(): Promise<void> {}
}

@Injectable()
class RecordingWorker {
  @OnJob({ queue: QUEUES.recordings, job: JOBS.recordingAutomation, concurrency: 5 })
  async run(): Promise<void> {}
}

@Injectable()
class AttendanceWorker {
  @OnJob({ queue: QUEUES.inbound, job: JOBS.computeAttendance, concurrency: 2 })
  async compute(): Promise<void> {}
}

@Injectable()
class RecordingWorkerOnTheWrongQueue {
  @OnJob({ queue: QUEUES.inbound, job: JOBS.recordingAutomation, concurrency: 5 })
  async run(): Promise<void> {}
}

interface Started {
  queue: string;
  job: string;
  concurrency: number;
  handler: (job: Job) => Promise<unknown>;
}

/** Boots JobHandlers among `handlers`, as a worker module would; returns what it started. */
async function boot(handlers: Type[]): Promise<Started[]> {
  const started: Started[] = [];
  const processors = {
    start: (queue: Queue, job: string, concurrency: number, handler: Started['handler']) =>
      started.push({ queue: queue.name, job, concurrency, handler }),
  };
  const queues: Provider[] = Object.values(QUEUES).map((name) => ({
    provide: getQueueToken(name),
    useValue: { name },
  }));
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      JobHandlers,
      { provide: APP_CONFIG, useValue: loadConfig({ DELIVERY_CONCURRENCY: '7' }) },
      { provide: QueueProcessors, useValue: processors },
      ...queues,
      ...handlers,
    ],
  }).compile();
  await moduleRef.init();
  return started;
}

const ALL = [Deliverer, InboundWorker, RecordingWorker, AttendanceWorker];

describe('JobHandlers', () => {
  it('starts one processor per job, on its queue, at its concurrency', async () => {
    const started = await boot(ALL);
    expect(started.map(({ queue, job, concurrency }) => ({ queue, job, concurrency }))).toEqual(
      expect.arrayContaining([
        { queue: 'deliveries', job: 'deliver', concurrency: 7 },
        { queue: 'inbound', job: 'process-inbound', concurrency: 20 },
        { queue: 'recordings', job: 'recording-automation', concurrency: 5 },
        { queue: 'inbound', job: 'compute-attendance', concurrency: 2 },
      ]),
    );
    expect(started).toHaveLength(4);
  });

  it('runs the decorated method on its own instance', async () => {
    const started = await boot(ALL);
    const deliver = started.find((s) => s.job === JOBS.deliver)!;
    const job = { id: 'j1', name: 'deliver', data: { id: 'd1' }, attemptsMade: 0, opts: {} };
    await expect(deliver.handler(job as Job)).resolves.toBe('delivered d1');
  });

  it('refuses to start when a job has no handler, naming the job and its queue', async () => {
    await expect(boot([Deliverer, RecordingWorker])).rejects.toThrow(
      'Cannot start the job handlers: job "process-inbound" on queue "inbound" has no handler',
    );
  });

  it('refuses to start when a job has two handlers, naming both', async () => {
    await expect(boot([...ALL, SecondDeliverer])).rejects.toThrow(
      'job "deliver" on queue "deliveries" has 2 handlers (Deliverer.deliver, SecondDeliverer.handle)',
    );
  });

  it('refuses a handler declared on another queue than its job runs on', async () => {
    await expect(boot([Deliverer, InboundWorker, RecordingWorkerOnTheWrongQueue])).rejects.toThrow(
      'job "recording-automation" on queue "recordings" is declared by ' +
        'RecordingWorkerOnTheWrongQueue.run on queue "inbound"',
    );
  });

  it('names every problem at once', async () => {
    await expect(boot([SecondDeliverer, Deliverer])).rejects.toThrow(
      /"deliver".* has 2 handlers.*; job "process-inbound".* has no handler.*; job "recording-automation".* has no handler/,
    );
  });
});
