import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { TestApp } from './test-app';
import { waitFor } from './wait-for';

const ROOT = join(__dirname, '..', '..');

export interface SpawnedApp {
  child: ChildProcess;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs src/main.ts in its own process (as `npm start` does), for what only a real process
 * shows: exit codes, signals, stderr.
 */
export function spawnApp(env: Record<string, string>): SpawnedApp {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return { child, output: () => text, exit };
}

/**
 * How long a spawned app may take to answer /health/ready: it transpiles the whole app with
 * ts-node before it listens, which takes over a minute on a loaded 2-core machine.
 */
export const SPAWN_READY_MS = 120_000;
/** The budget of a test that spawns `apps` apps in turn: their starts, then a minute of work. */
export const spawnTestMs = (apps = 1): number => apps * SPAWN_READY_MS + 60_000;

/** Waits until the app at `baseUrl` answers /health/ready with 200. */
export async function waitUntilReady(baseUrl: string, what = 'the spawned app'): Promise<void> {
  await waitFor(async () => (await fetch(`${baseUrl}/health/ready`)).status === 200, {
    timeoutMs: SPAWN_READY_MS,
    what: `${what} to be ready`,
  });
}

/** A port the kernel just handed out and released, for a spawned app to listen on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface SpawnedWorker extends SpawnedApp {
  url: string;
}

export interface WorkerOptions {
  /** Added to (or replacing) the worker's environment: e.g. APP_ROLE=all, delivery settings. */
  env?: Record<string, string>;
  /** Where the process goes as soon as it is spawned, for the test's teardown to kill it. */
  workers?: SpawnedApp[];
}

/**
 * A worker process beside the test app `t` (APP_ROLE=api): over its database and queue
 * prefix, receivers on loopback allowed, warnings only, and a short sweep so that the
 * deliveries a killed worker held are queued again within a test. Resolves once it is ready.
 */
export async function startWorker(t: TestApp, options: WorkerOptions = {}): Promise<SpawnedWorker> {
  // A port the kernel just handed out: a random one may be taken, and the worker would exit.
  const port = String(await freePort());
  const env = {
    APP_ROLE: 'worker',
    PORT: port,
    LOG_LEVEL: 'warn',
    DATABASE_URL: t.database.url,
    REDIS_URL: t.config.redis.url,
    QUEUE_PREFIX: t.config.redis.prefix,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    DELIVERY_SWEEP_INTERVAL_MS: '500',
    ...options.env,
  };
  const worker = spawnApp(env);
  options.workers?.push(worker);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(url, `the ${env.APP_ROLE} process on :${port}`);
  return { ...worker, url };
}
