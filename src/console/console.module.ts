import { Inject, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { CONSOLE_PATH, consoleAssets, findConsoleAssets } from './console-assets';
import { consoleSecurityHeaders } from './console-headers';
import { PortalLinksController } from './portal-links.controller';
import { PortalLinksService } from './portal-links.service';

/**
 * The web console (docs/console.md, API role): the built front end (console/) at /console, while
 * CONSOLE_ENABLED, and POST /api/portal-links. The console itself holds no server logic: it
 * signs in at /oauth/token and does everything through the public API.
 */
@Module({ controllers: [PortalLinksController], providers: [PortalLinksService] })
export class ConsoleModule implements NestModule {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    if (!this.config.console.enabled) return;
    consumer
      .apply(
        consoleAssets(
          findConsoleAssets,
          consoleSecurityHeaders(this.config.console.frameAncestors),
        ),
      )
      .forRoutes(CONSOLE_PATH);
  }
}
