import { BullModule } from '@nestjs/bull';
import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { QueueConnections, QueueConnectionsModule } from './queue-connections';
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
 * Bull, on the connections of QueueConnections (REDIS_URL, Sentinel or Cluster), each queue
 * under its own hash tag (queueOptions); every queue is injectable everywhere, and so is
 * QueueProcessors, through which processors start and readiness learns of those that stopped.
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      imports: [QueueConnectionsModule],
      inject: [QueueConnections],
      useFactory: (connections: QueueConnections) => ({
        createClient: connections.createClient,
      }),
    }),
    ...registered,
  ],
  providers: [QueueProcessors],
  exports: [...registered, QueueProcessors],
})
export class QueueModule {}
