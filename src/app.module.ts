import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { DestinationStream } from 'pino';
import { AttendanceModule } from './attendance/attendance.module';
import { AttendanceWorkerModule } from './attendance/attendance-worker.module';
import { AccountsModule } from './accounts/accounts.module';
import { AccountsWorkerModule } from './accounts/accounts-worker.module';
import { AuthModule } from './auth/auth.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { ConfigModule } from './config/config.module';
import { ConsoleModule } from './console/console.module';
import { AppConfig } from './config/config.types';
import { DatabaseModule } from './database/database.module';
import { DeliveryLogModule } from './dispatcher/api/delivery-log.module';
import { DispatcherWorkerModule } from './dispatcher/engine/dispatcher-worker.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { InboundWorkerModule } from './inbound/inbound-worker.module';
import { InboundStatusModule } from './inbound/status/inbound-status.module';
import { SOURCE_API_MODULES, SOURCE_WORKER_MODULES } from './inbound/sources/registry';
import { JobHandlersModule } from './queue/job-handlers';
import { MeetingsModule } from './meetings/meetings.module';
import { MetricsModule } from './metrics/metrics.module';
import { QueueDashboardModule } from './queue/queue-dashboard.module';
import { QueueModule } from './queue/queue.module';
import { RecordingAutomationModule } from './inbound/recording-automation/recording-automation.module';
import { RecordingsModule } from './recordings/recordings.module';
import { RetentionModule } from './retention/retention.module';
import { TelemetryModule } from './telemetry/telemetry.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { TemplatesModule } from './shaping/templates.module';
import { SecretCipherModule } from './webhooks/secret-cipher.module';

/** Modules that serve the public HTTP API (role api or all). */
const API_MODULES: Type[] = [
  // First: the webhook's route is then matched first, and the platform's events are the hot path.
  ...SOURCE_API_MODULES,
  AuthModule,
  WebhooksModule,
  TemplatesModule,
  DeliveryLogModule,
  EventsModule,
  MeetingsModule,
  RecordingsModule,
  QueueDashboardModule,
  ConsoleModule,
  InboundStatusModule,
  AttendanceModule,
  AccountsModule,
];

/** Modules that run job handlers and the sweepers (role worker or all). */
const WORKER_MODULES: Type[] = [
  // Finds the @OnJob handlers of the modules below and starts them.
  JobHandlersModule,
  DispatcherWorkerModule,
  InboundWorkerModule,
  RecordingAutomationModule,
  RetentionModule,
  ...SOURCE_WORKER_MODULES,
  AttendanceWorkerModule,
  AccountsWorkerModule,
];

export interface AppModuleOptions {
  /** Where JSON logs go (stdout when absent); tests capture them here. */
  logStream?: DestinationStream;
}

/**
 * Composes the process for its APP_ROLE: every role gets config, database, queues, health and
 * metrics; the API and worker parts are added by role.
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        SecretCipherModule,
        TelemetryModule.forRoot(config.telemetry),
        DatabaseModule,
        QueueModule,
        MetricsModule,
        HealthModule,
        ...(config.role.api ? API_MODULES : []),
        ...(config.role.worker ? WORKER_MODULES : []),
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    };
  }
}
