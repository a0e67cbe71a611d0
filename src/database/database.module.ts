import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { dataSourceOptions } from './data-source-options';
import { START_RETRY_ATTEMPTS, START_RETRY_DELAY_MS } from './start-retries';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config),
        autoLoadEntities: true,
        retryAttempts: START_RETRY_ATTEMPTS,
        retryDelay: START_RETRY_DELAY_MS,
      }),
    }),
  ],
})
export class DatabaseModule {}
