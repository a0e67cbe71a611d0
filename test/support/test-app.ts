import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestExpressApplication } from '@nestjs/platform-express';
import { clientToken } from '../../scripts/client-token';
import { deleteQueueKeys } from '../../scripts/queue-keys';
import { createApp } from '../../src/bootstrap';
import { AppConfig } from '../../src/config/config.types';
import { Env, loadConfig } from '../../src/config/load-config';
import { recordResponses, rememberDocument } from './response-contract';
import { TestDatabase, createTestDatabase } from './test-db';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Two API clients with every API scope, one that may only read webhooks, the deployment's
 * operator (bridge:admin), and one that may use the queue dashboard.
 */
export const CLIENTS = {
  alpha: {
    client_id: 'alpha',
    client_secret: 'alpha-secret-0123456789',
    scopes:
      'webhooks:read webhooks:write meetings:read meetings:write users:read users:write recordings:read recordings:write webinars:read webinars:write reports:read',
  },
  beta: {
    client_id: 'beta',
    client_secret: 'beta-secret-0123456789ab',
    scopes:
      'webhooks:read webhooks:write meetings:read meetings:write users:read users:write recordings:read recordings:write webinars:read webinars:write reports:read',
  },
  reader: {
    client_id: 'reader',
    client_secret: 'reader-secret-012345678',
    scopes: 'webhooks:read',
  },
  admin: {
    client_id: 'admin',
    client_secret: 'admin-secret-0123456789ab',
    // Every scope a client may hold: the operator's and every API scope.
    scopes:
      'bridge:admin accounts:write attendance:read webhooks:read webhooks:write meetings:read meetings:write users:read users:write recordings:read recordings:write webinars:read webinars:write reports:read',
  },
  operator: {
    client_id: 'operator',
    client_secret: 'operator-secret-0123456',
    scopes: 'queues:admin',
  },
} as const;
export type ClientName = keyof typeof CLIENTS;

/** Every scope `client` holds but `scope`: a token that lacks exactly the route's scope. */
export const scopesOfBut = (client: ClientName, scope: string): string =>
  CLIENTS[client].scopes
    .split(' ')
    .filter((s) => s !== scope)
    .join(' ');

export const ZOOM_SECRET_TOKEN = 'test_secret_token';

/** The line src/common/all-exceptions.filter.ts logs for an answer of 5xx. */
const ANSWERED_500 = /"level":50,.*"context":"Errors"/;

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  baseUrl: string;
  database: TestDatabase;
  /** Every JSON log line the app wrote, raw. */
  logs: string[];
  /** Obtains a bearer token for one of CLIENTS. */
  token(client?: ClientName, scope?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Env;
  /** Reuse a database (e.g. to restart an app over the same data). */
  database?: TestDatabase;
  /** Reuse a queue prefix (same Redis keys) across restarts. */
  queuePrefix?: string;
}

/** Boots the real app (own database, own Redis key prefix) on a random local port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const prefix = options.queuePrefix ?? `mebtest:${randomBytes(4).toString('hex')}`;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
    ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    DELIVERY_BACKOFF_MS: '50',
    DELIVERY_TIMEOUT_MS: '2000',
    SHUTDOWN_TIMEOUT_MS: '10000',
    // A scheduled reconciliation would call the fake platform's reports at every start; the
    // specs that test it turn it on.
    RECONCILE_INTERVAL_MS: '0',
    ...options.env,
  });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const lines = chunk.toString('utf8').split('\n').filter(Boolean);
      logs.push(...lines);
      // A 500 answers only "Internal server error": its stack goes where a failing run shows it.
      for (const line of lines) if (ANSWERED_500.test(line)) process.stderr.write(`${line}\n`);
      callback();
    },
  });
  const app = await createApp(config, { logStream });
  // Held against the document of the API role; a worker serves none of its routes.
  if (config.role.api) recordResponses(app.getHttpServer());
  await app.listen(0, '127.0.0.1');
  // Longer than the tests' own fetch keeps an idle connection (undici: 4 s, its timers coarse
  // under load), so the server never closes one just as a test sends on it: a reset.
  (app.getHttpServer() as Server).keepAliveTimeout = 30_000;
  const { port } = app.getHttpServer().address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  if (config.role.api) await rememberDocument(baseUrl);

  return {
    app,
    config,
    baseUrl,
    database,
    logs,
    token: (client: ClientName = 'alpha', scope?: string) =>
      clientToken(baseUrl, CLIENTS[client], scope),
    async close() {
      await app.close();
      if (!options.database) await database.drop();
      // The app's own Redis: a spec may run it on the Sentinel group or the Cluster.
      if (!options.queuePrefix) await deleteQueueKeys(config.redis, prefix);
    },
  };
}

export const deleteRedisKeys = (prefix: string): Promise<void> =>
  deleteQueueKeys(TEST_REDIS_URL, prefix);
