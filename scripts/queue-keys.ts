import Redis, { Cluster } from 'ioredis';
import { AppConfig } from '../src/config/config.types';
import { createRedis } from '../src/redis/redis-connection';
import { keyPatterns } from '../src/redis/redis-keys';

/** Every key of `patterns` on one server, deleted one by one (a Cluster refuses a multi-key DEL across slots). */
async function deleteOnServer(redis: Redis, patterns: string[], oneByOne: boolean): Promise<void> {
  for (const pattern of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length === 0) continue;
      if (oneByOne) await Promise.all(keys.map((key) => redis.del(key)));
      else await redis.del(...keys);
    } while (cursor !== '0');
  }
}

/**
 * Deletes every Redis key of one queue prefix (docs/operations.md#redis-keys): a fresh start
 * for the try-out's `--reset` and the tests' own prefixes, so nothing queued before is
 * delivered again. `redis` is a URL, or a configuration (Sentinel or Cluster too).
 */
export async function deleteQueueKeys(
  redis: string | AppConfig['redis'],
  prefix: string,
): Promise<void> {
  const client =
    typeof redis === 'string'
      ? new Redis(redis, { lazyConnect: true, maxRetriesPerRequest: 1 })
      : createRedis(redis, { lazyConnect: true, maxRetriesPerRequest: 1 }, { lazyConnect: true });
  try {
    await client.connect();
    const patterns = keyPatterns(prefix);
    if (client instanceof Cluster) {
      for (const node of client.nodes('master')) await deleteOnServer(node, patterns, true);
    } else {
      await deleteOnServer(client, patterns, false);
    }
  } finally {
    client.disconnect();
  }
}
