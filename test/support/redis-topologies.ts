import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AppConfig } from '../../src/config/config.types';
import { Env, loadConfig } from '../../src/config/load-config';

/**
 * The Sentinel group and the Cluster of test/support/redis-topologies.sh (which `.ci/run`
 * starts), as the service's variables name them.
 */
export const SENTINEL_ENV: Record<string, string> = {
  REDIS_SENTINELS: '127.0.0.1:26380,127.0.0.1:26381,127.0.0.1:26382',
  REDIS_SENTINEL_NAME: 'mebmaster',
};
/** Three of the Cluster's nodes are enough for the client, which finds the others itself. */
export const CLUSTER_ENV: Record<string, string> = {
  REDIS_CLUSTER_NODES: '127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003',
};
/** Every node of the Cluster: three masters and a replica of each, whichever is which now. */
export const CLUSTER_PORTS = [17001, 17002, 17003, 17004, 17005, 17006];

/** The Redis part of the configuration of `env` (one of the above, or a REDIS_URL). */
export const redisConfigOf = (env: Env): AppConfig['redis'] => loadConfig(env).redis;

/**
 * Starts what of both topologies does not answer (idempotent; a few seconds the first time):
 * a spec calls it first, so it runs outside `.ci/run` too, and a server a failover test shut
 * down comes back (as a replica of the new master).
 */
export async function startRedisTopologies(): Promise<void> {
  await promisify(execFile)('bash', [join(__dirname, 'redis-topologies.sh'), 'start'], {
    timeout: 60_000,
  });
}
