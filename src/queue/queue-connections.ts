import { getQueueToken } from '@nestjs/bull';
import { Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bull';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { RedisConnection, closeRedis, createRedis } from '../redis/redis-connection';
import { QUEUES } from './queue.constants';

/** The connections Bull asks for: commands, its event subscriber, its blocking pop. */
export type BullClientType = 'client' | 'subscriber' | 'bclient';

/**
 * Bull's Redis connections, made by createRedis for each queue (a server by URL or through
 * Sentinel, or a Cluster; docs/operations.md#redis), and closed here: Bull closes only the
 * connections it made itself.
 */
@Injectable()
export class QueueConnections implements OnApplicationShutdown {
  private readonly made = new Map<RedisConnection, BullClientType>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Bull's `createClient`. */
  readonly createClient = (type: BullClientType): RedisConnection => {
    // Bull refuses a subscriber or blocking connection that fails commands while Redis is
    // away or checks readiness itself: both would end its loops during a failover.
    const client =
      type === 'client'
        ? createRedis(this.config.redis)
        : createRedis(this.config.redis, { maxRetriesPerRequest: null, enableReadyCheck: false });
    this.made.set(client, type);
    return client;
  };

  async onApplicationShutdown(): Promise<void> {
    // Each queue's close (memoized by Bull) waits for its jobs; only then do they go.
    await Promise.all(
      Object.values(QUEUES).map((name) =>
        this.moduleRef
          .get<Queue>(getQueueToken(name), { strict: false })
          .close()
          .catch(() => undefined),
      ),
    );
    await Promise.all(
      [...this.made].map(([client, type]) =>
        // A blocked pop answers QUIT only when its wait is over.
        type === 'bclient' ? client.disconnect() : closeRedis(client),
      ),
    );
    this.made.clear();
  }
}

@Module({ providers: [QueueConnections], exports: [QueueConnections] })
export class QueueConnectionsModule {}
