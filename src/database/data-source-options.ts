import { join } from 'node:path';
import { DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/config.types';
import { MIGRATIONS } from './migrations';

/** One definition shared by the app (TypeOrmModule) and the migration CLI (data-source.ts). */
export function dataSourceOptions(config: AppConfig): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.database.url,
    migrations: MIGRATIONS,
    migrationsRun: config.database.migrationsRun,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // Not 'error': TypeORM would log failed queries with their parameters (payloads, e-mails).
    logging: ['migration'],
    applicationName: `meeting-event-bridge:${config.role.name}`,
    extra: { max: 20, connectionTimeoutMillis: 5000 },
  };
}

/** For the CLI, which has no Nest modules to register entities: every *.entity file. */
export function cliDataSourceOptions(config: AppConfig): DataSourceOptions {
  return {
    ...dataSourceOptions(config),
    entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
  };
}
