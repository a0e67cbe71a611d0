import Redis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { AppConfig } from '../config/config.types';

/** A connection to the configured Redis: one server (by URL or through Sentinel) or a Cluster. */
export type RedisConnection = Redis | Cluster;

/**
 * After a failover the old master comes back as a replica, and a connection that still points
 * at it is refused every write with READONLY: reconnecting (and resending the command) finds
 * the new master through Sentinel or the Cluster's slot map.
 */
function reconnectOnReadOnly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/**
 * The options of one connection to a single Redis server, reached through Sentinel when
 * REDIS_SENTINELS is set. ioredis asks the Sentinels for the master and follows its failovers
 * (docs/operations.md#redis): nothing of the service's own picks a master.
 */
function serverOptions(config: AppConfig['redis'], extra: RedisOptions): RedisOptions {
  if (!config.sentinel) return { reconnectOnError: reconnectOnReadOnly, ...extra };
  return {
    sentinels: config.sentinel.nodes,
    name: config.sentinel.name,
    password: config.password ?? undefined,
    // No failoverDetector: ioredis 5 leaves its Sentinel subscriptions open after QUIT. A
    // master that dies closes the connection, and one demoted answers READONLY: both make
    // ioredis ask the Sentinels again.
    reconnectOnError: reconnectOnReadOnly,
    ...extra,
  };
}

/**
 * A new connection to the configured Redis (REDIS_URL, REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES; docs/configuration.md#redis), every client of the service made here.
 * `extra` are ioredis options for each server connection (a Cluster's `redisOptions`).
 */
export function createRedis(
  config: AppConfig['redis'],
  extra: RedisOptions = {},
  cluster: Omit<ClusterOptions, 'redisOptions'> = {},
): RedisConnection {
  if (config.cluster) {
    return new Cluster(config.cluster.nodes, {
      // ioredis refreshes the slot map only when a command meets MOVED or a lost node unless
      // told to: a client quiet on a failed master's slots would never learn the promoted
      // replica, and readiness (pingRedis) would stay 503 (docs/operations.md#redis).
      slotsRefreshInterval: SLOTS_REFRESH_MS,
      ...cluster,
      redisOptions: {
        password: config.password ?? undefined,
        reconnectOnError: reconnectOnReadOnly,
        ...extra,
      },
    });
  }
  if (config.sentinel) return new Redis(serverOptions(config, extra));
  return new Redis(config.url, serverOptions(config, extra));
}

/** How often a Cluster client asks for the slot map: one CLUSTER SLOTS a client. */
const SLOTS_REFRESH_MS = 2000;

/** Where the configured Redis is, as the logs and start messages name it (no password). */
export function redisShown(config: AppConfig['redis']): { where: string; variable: string } {
  const list = (nodes: { host: string; port: number }[]) =>
    nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (config.cluster) return { where: list(config.cluster.nodes), variable: 'REDIS_CLUSTER_NODES' };
  if (config.sentinel) {
    return {
      where: `${config.sentinel.name} via ${list(config.sentinel.nodes)}`,
      variable: 'REDIS_SENTINELS',
    };
  }
  const url = new URL(config.url);
  const db = url.pathname === '/' ? '' : url.pathname;
  return { where: `${url.hostname}:${url.port || 6379}${db}`, variable: 'REDIS_URL' };
}

/**
 * Closes a connection: QUIT when it is up, so commands sent before it are answered first; at
 * once when it is not (QUIT on a reconnecting connection waits for a Redis that may never
 * come back).
 */
export async function closeRedis(client: RedisConnection): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

/**
 * PING on one server; on a Cluster, CLUSTER INFO on every master the client knows, each to say
 * the Cluster is ok and all of its masters known. A Cluster with one master away has the
 * queues or scripts of that master's slots stopped, so it is not all there: until its nodes
 * mark the master failed (the node timeout) they still say ok, but the client has dropped the
 * dead master's connection, and after that they say fail until a replica is promoted and the
 * client has learned it (docs/operations.md#redis).
 */
export async function pingRedis(client: RedisConnection): Promise<void> {
  if (!(client instanceof Cluster)) {
    await client.ping();
    return;
  }
  const masters = client.nodes('master');
  if (masters.length === 0) throw new Error('no Cluster master is known');
  const infos = await Promise.all(masters.map((node) => node.cluster('INFO')));
  const field = (info: string, name: string) => new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
  const down = infos.find((info) => field(info, 'cluster_state') !== 'ok');
  if (down !== undefined) throw new Error(`cluster_state:${field(down, 'cluster_state')}`);
  const size = Math.max(...infos.map((info) => Number(field(info, 'cluster_size'))));
  if (masters.length < size) {
    throw new Error(`${masters.length} of the Cluster's ${size} masters reachable`);
  }
}
