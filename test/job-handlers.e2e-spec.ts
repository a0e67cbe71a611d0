import { randomBytes } from 'node:crypto';
import { Injectable, Provider } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import { AppModule } from '../src/app.module';
import { Env, loadConfig } from '../src/config/load-config';
import { InboundProcessor } from '../src/inbound/inbound.processor';
import { OnJob } from '../src/queue/on-job.decorator';
import { QueueProcessors } from '../src/queue/queue-processors';
import { JOBS, QUEUES } from '../src/queue/queue.constants';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { TestDatabase, createTestDatabase } from './support/test-db';

/** A second handler of the deliver job, as a copy-pasted processor would declare it. */
@Injectable()
class AnotherDeliverer {
  @OnJob({ queue: QUEUES.deliveries, job: JOBS.deliver, concurrency: 1 })
  async deliver(): Promise<void> {}
}

describe('booting with the @OnJob handlers of the role', () => {
  let database: TestDatabase;
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    await deleteRedisKeys(prefix);
  });

  /**
   * Boots the real AppModule with `env`, plus `providers`, changed by `change`; resolves to the
   * boot's error, if any, and the jobs whose processors it started.
   */
  async function boot(
    env: Env,
    {
      providers = [],
      change = (builder) => builder,
    }: {
      providers?: Provider[];
      change?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
    },
  ): Promise<{ error?: Error; started: string[] }> {
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'fatal',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: prefix,
      ...env,
    });
    const moduleRef = await change(
      Test.createTestingModule({ imports: [AppModule.forRoot(config)], providers }),
    ).compile();
    const app = moduleRef.createNestApplication();
    const start = jest.spyOn(QueueProcessors.prototype, 'start');
    const started = () => start.mock.calls.map(([queue, job]) => `${queue.name}/${job}`);
    try {
      await app.init();
      return { started: started() };
    } catch (error) {
      return { error: error as Error, started: started() };
    } finally {
      start.mockRestore();
      await app.close();
    }
  }

  it('refuses to start the worker role when a job has no handler, naming the job and its queue', async () => {
    const { error, started } = await boot(
      { APP_ROLE: 'worker' },
      { change: (b) => b.overrideProvider(InboundProcessor).useValue({}) },
    );
    expect(error?.message).toBe(
      'Cannot start the job handlers: job "process-inbound" on queue "inbound" has no handler ' +
        '(an @OnJob method on a worker provider)',
    );
    expect(started).toEqual([]);
  });

  it('refuses to start the role that runs both when a job has two handlers, naming them', async () => {
    const { error, started } = await boot({ APP_ROLE: 'all' }, { providers: [AnotherDeliverer] });
    expect(error?.message).toBe(
      'Cannot start the job handlers: job "deliver" on queue "deliveries" has 2 handlers ' +
        '(AnotherDeliverer.deliver, DeliveriesProcessor.handle)',
    );
    expect(started).toEqual([]);
  });

  it('processes and checks nothing in the API role', async () => {
    // Checked, the extra handler and the missing ones would refuse the start.
    expect(await boot({ APP_ROLE: 'api' }, { providers: [AnotherDeliverer] })).toEqual({
      started: [],
    });
  });

  it('starts one processor per job in the worker role', async () => {
    const { error, started } = await boot({ APP_ROLE: 'worker' }, {});
    expect(error).toBeUndefined();
    expect(started.sort()).toEqual([
      'deliveries/deliver',
      'inbound/compute-attendance',
      'inbound/process-inbound',
      'recordings/recording-automation',
    ]);
  });
});
