import { getQueueToken } from '@nestjs/bull';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { jobRunner } from './job-runner';
import { JobMethod, ON_JOB, OnJobOptions } from './on-job.decorator';
import { JOB_QUEUES, JobName } from './queue.constants';
import { QueueProcessors } from './queue-processors';

/** One @OnJob method found on a provider instance. */
export interface FoundJobHandler {
  options: OnJobOptions;
  instance: object;
  method: string;
  /** "Class.method", for messages. */
  name: string;
}

/** Every @OnJob method of `instances`. */
export function findJobHandlers(
  instances: readonly unknown[],
  scanner: MetadataScanner,
): FoundJobHandler[] {
  const found: FoundJobHandler[] = [];
  for (const instance of instances) {
    if (!instance || typeof instance !== 'object') continue;
    const prototype = Object.getPrototypeOf(instance) as object;
    for (const method of scanner.getAllMethodNames(prototype)) {
      const fn = (instance as Record<string, unknown>)[method];
      const options =
        typeof fn === 'function'
          ? (Reflect.getMetadata(ON_JOB, fn) as OnJobOptions | undefined)
          : undefined;
      if (options) {
        found.push({ options, instance, method, name: `${instance.constructor.name}.${method}` });
      }
    }
  }
  return found;
}

/**
 * Why these handlers cannot run the service's jobs: a job of JOBS without a handler, with two,
 * or declared on another queue than the one it runs on. Empty when each job has exactly one.
 */
export function jobHandlerProblems(handlers: readonly FoundJobHandler[]): string[] {
  const problems: string[] = [];
  for (const [job, queue] of Object.entries(JOB_QUEUES) as [JobName, string][]) {
    const mine = handlers.filter((h) => h.options.job === job);
    const where = `job "${job}" on queue "${queue}"`;
    if (mine.length === 0) {
      problems.push(`${where} has no handler (an @OnJob method on a worker provider)`);
    } else if (mine.length > 1) {
      const names = mine.map((h) => h.name).sort();
      problems.push(`${where} has ${mine.length} handlers (${names.join(', ')})`);
    }
    for (const h of mine.filter((h) => h.options.queue !== queue)) {
      problems.push(`${where} is declared by ${h.name} on queue "${h.options.queue}"`);
    }
  }
  return problems;
}

/**
 * Starts the worker's job handlers: at module init it finds every @OnJob method among this
 * process's providers and refuses to start (the bootstrap throws) unless each job of JOBS has
 * exactly one; once the application is up it starts Bull's processor for each through
 * QueueProcessors, wrapped by the runner that logs every failure.
 */
@Injectable()
export class JobHandlers implements OnModuleInit, OnApplicationBootstrap {
  private handlers: FoundJobHandler[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly moduleRef: ModuleRef,
    private readonly processors: QueueProcessors,
  ) {}

  onModuleInit(): void {
    const instances = this.discovery
      .getProviders()
      .filter((wrapper) => wrapper.isDependencyTreeStatic())
      .map((wrapper) => wrapper.instance as unknown);
    const handlers = findJobHandlers(instances, this.scanner);
    const problems = jobHandlerProblems(handlers);
    if (problems.length > 0) {
      throw new Error(`Cannot start the job handlers: ${problems.join('; ')}`);
    }
    this.handlers = handlers;
  }

  onApplicationBootstrap(): void {
    for (const { options, instance, method } of this.handlers) {
      const queue = this.moduleRef.get<Queue>(getQueueToken(options.queue), { strict: false });
      const handler = (instance as Record<string, JobMethod>)[method].bind(instance);
      const { concurrency, whenFinal, onFinalFailure } = options;
      this.processors.start(
        queue,
        options.job,
        typeof concurrency === 'function' ? concurrency(this.config) : concurrency,
        jobRunner(
          handler,
          {
            whenFinal,
            onFinalFailure:
              onFinalFailure && ((job, error) => onFinalFailure(instance, job, error)),
          },
          new Logger(instance.constructor.name),
        ),
      );
    }
  }
}

/** Worker role only: the API role processes no jobs, so it checks none either. */
@Module({ imports: [DiscoveryModule], providers: [JobHandlers] })
export class JobHandlersModule {}
