import { BullModule } from '@nestjs/bull';
import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { QUEUES, queueOptions } from './queue.constants';
import { QueueProcessors } from './queue-processors';

const registered = Object.values(QUEUES).map((name) =>
  BullModule.registerQueueAsync({
    name,
    inject: [APP_CONFIG],
    useFactory: (config: AppConfig) => queueOptions(config, name),
  }),
);

/**
 * Bull, configured once from REDIS_URL; every queue is injectable everywhere, and so is
 * QueueProcessors, through which processors start and readiness learns of those that stopped.
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        redis: config.redis.url,
        prefix: config.redis.prefix,
      }),
    }),
    ...registered,
  ],
  providers: [QueueProcessors],
  exports: [...registered, QueueProcessors],
})
export class QueueModule {}
