import { getQueueToken } from '@nestjs/bull';
import type { INestApplication } from '@nestjs/common';
import type { Queue } from 'bull';
import { AppConfig } from '../config/config.types';
import { QUEUES } from '../queue/queue.constants';
import { pingRedis, redisShown } from '../redis/redis-connection';

/** How long the start waits for Redis to answer before warning that it does not. */
const REDIS_WAIT_MS = 2000;

/** The Redis client's state once it answered a ping, or the reason it did not in time. */
async function redisReason(queue: Queue): Promise<string | undefined> {
  const client = queue.client;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`no answer within ${REDIS_WAIT_MS} ms (connection ${client.status})`),
      REDIS_WAIT_MS,
    );
  });
  try {
    return await Promise.race([
      pingRedis(client).then(
        () => undefined,
        (error: Error) => error.message,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a newcomer should hear at start rather than find out later, known from the
 * configuration alone and so said first, before the app loads: no API client configured.
 * On the API every token request is then 401; on a worker every webhook belongs to a client
 * it does not know, and the fan-out rule (docs/destinations.md) delivers to none of them,
 * which would otherwise look like a silent stall.
 */
export function configWarnings(config: AppConfig): string[] {
  if (config.auth.clients.length > 0) return [];
  if (config.role.api) {
    return [
      'No API client is configured (AUTH_CLIENTS is empty): POST /oauth/token answers 401 to ' +
        'everyone, so no /api route can be called. Set AUTH_CLIENTS (see .env.example), or try ' +
        'the service with npm run tryout',
    ];
  }
  return [
    'No API client is configured (AUTH_CLIENTS is empty) on this worker: webhooks belong to ' +
      'API clients, and a worker delivers only for the clients it is given, so it delivers ' +
      'nothing. Give every process the same AUTH_CLIENTS (see docs/configuration.md)',
  ];
}

/**
 * Redis not answering once the app is up: the API starts anyway; queued work waits and
 * /health/ready answers 503 until it is back.
 */
export async function redisWarnings(app: INestApplication, config: AppConfig): Promise<string[]> {
  const reason = await redisReason(app.get<Queue>(getQueueToken(QUEUES.deliveries)));
  if (reason === undefined) return [];
  const { where, variable } = redisShown(config.redis);
  return [
    `Redis at ${where} (${variable}) does not answer: ${reason}. Check ${variable} and that ` +
      'Redis is running; until it answers, /health/ready answers 503 and queued work waits',
  ];
}
