import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppLogger, logConfigProblems, unbufferedLogger } from './common/logging';
import { dependencyWarnings, startupProblem } from './common/startup-problems';
import { ConfigError, loadConfigFromProcess } from './config/load-config';
import { AppConfig } from './config/config.types';

function readConfig(): AppConfig {
  try {
    return loadConfigFromProcess();
  } catch (error) {
    if (error instanceof ConfigError) {
      logConfigProblems(error.problems);
      process.exit(1);
    }
    throw error;
  }
}

async function main(config: AppConfig): Promise<void> {
  // Said before the app loads (seconds under ts-node), unbuffered since loading it keeps the
  // event loop busy: what a person must read first comes first (Nest's own start is at debug),
  // and PostgreSQL or Redis taking no connection is said at once rather than after a silence.
  const { configWarnings, redisWarnings } = await import('./health/startup-checks');
  const early = unbufferedLogger(config);
  for (const warning of configWarnings(config)) early.warn(warning, 'Bootstrap');
  const down = await dependencyWarnings(config);
  for (const warning of [down.postgres, down.redis]) {
    if (warning) early.warn(warning, 'Bootstrap');
  }
  // Loaded once the configuration is valid: a bad one is reported before the whole app loads.
  const { createApp } = await import('./bootstrap');
  const app = await createApp(config);
  const logger = new Logger('Bootstrap');

  // Nest's own shutdown hooks re-raise the signal and so exit non-zero; we want 0 after a drain.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received: draining`);
    const force = setTimeout(() => {
      logger.error(`drain took over ${config.shutdownTimeoutMs} ms: exiting`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    try {
      await app.close();
      logger.log('drained: exiting');
      process.exit(0);
    } catch (error) {
      logger.error(`shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // Listened on here rather than by app.listen, which logs a taken port as an error of its own
  // before the one line below that says what to do about it.
  await app.init();
  const server = app.getHttpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // What app.listen would have set, for whatever waits on it.
  app.get(HttpAdapterHost).listening = true;
  logger.log(`listening on :${config.port} as role ${config.role.name}`);
  // Said once: a Redis already said to be away at the first look is not said again.
  if (!down.redis) for (const warning of await redisWarnings(app, config)) logger.warn(warning);
}

const config = readConfig();
/** Resolves once the process listens (the try-out waits for it); a failed start exits. */
export const listening: Promise<void> = main(config).catch((error: unknown) => {
  // In the log's JSON shape like every other line, with a hint that names the variable to check.
  const problem = startupProblem(error, config);
  const logger = new AppLogger(config);
  // A known problem is said in words, with its code; its stack would say nothing more.
  const code = (error as { code?: unknown } | null)?.code;
  if (problem) logger.fatal({ msg: `Failed to start: ${problem}`, code }, 'Bootstrap');
  else logger.fatal(error instanceof Error ? error : new Error(String(error)), 'Bootstrap');
  process.exit(1);
});
