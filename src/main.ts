import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { ConfigError, loadConfigFromProcess } from './config/load-config';
import { AppConfig } from './config/config.types';

function readConfig(): AppConfig {
  try {
    return loadConfigFromProcess();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
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

  await app.listen(config.port);
  logger.log(`listening on :${config.port} as role ${config.role.name}`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
