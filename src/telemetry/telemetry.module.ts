import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
} from '@nestjs/common';
import { APP_VERSION } from '../common/version';
import { TelemetryConfig } from '../config/config.types';
import { createTracing } from './sdk';
import { Tracing } from './tracing';

/** Flushes the buffered spans when the app closes (after the work in flight is done). */
@Injectable()
class TracingShutdown implements OnApplicationShutdown {
  constructor(@Inject(Tracing) private readonly tracing: Tracing) {}

  onApplicationShutdown(): Promise<void> {
    return this.tracing.shutdown();
  }
}

/** Tracing (docs/operations.md) for every module of the app: `Tracing`, off while no endpoint is set. */
@Global()
@Module({})
export class TelemetryModule {
  static forRoot(config: TelemetryConfig): DynamicModule {
    return {
      module: TelemetryModule,
      providers: [
        { provide: Tracing, useFactory: () => createTracing(config, APP_VERSION) },
        TracingShutdown,
      ],
      exports: [Tracing],
    };
  }
}
