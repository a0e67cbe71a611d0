import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule, AppModuleOptions } from './app.module';
import { requestLogger } from './common/logging';
import { answerBodyParserErrors, documentJsonBodies, requireJsonBody } from './common/request-body';
import { createValidationPipe } from './common/validation';
import { APP_VERSION } from './common/version';
import { AppConfig, Scope } from './config/config.types';
import { isZoomEventsRequest } from './inbound/inbound.controller';
import { InboundService } from './inbound/inbound.service';
import { RequestListener, zoomEventsRoute } from './inbound/zoom-events.route';
import { MetricsService } from './metrics/metrics.service';

export const BODY_LIMIT = '1mb';

// queues:admin is left out: no documented route takes it, and with it listed, "select all"
// in the Authorize dialog would ask every API client for a scope it lacks (invalid_scope).
const SCOPE_DESCRIPTIONS: Record<Exclude<Scope, 'queues:admin'>, string> = {
  'webhooks:read': 'Read webhook subscriptions and their delivery logs',
  'webhooks:write': 'Create, change, delete and test webhook subscriptions',
  'meetings:read': 'Read meetings',
  'meetings:write': 'Create, change, end and delete meetings',
  'users:read': 'List users',
  'recordings:read': 'List and download cloud recordings',
  'recordings:write': 'Delete cloud recordings',
};

function setupSwagger(app: INestApplication, version: string): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Meeting Event Bridge')
      .setDescription(
        'Receives the meeting platform (Zoom) webhooks, delivers them as signed notifications to ' +
          'subscribed webhooks, and passes meeting calls through to the platform API. ' +
          'Authorize with the client-credentials flow (your client_id and client_secret).',
      )
      .setVersion(version)
      .addOAuth2(
        {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS } },
        },
        'oauth2',
      )
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      .build(),
  );
  documentJsonBodies(document);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
  });
}

/** Builds the configured application without listening; main.ts and the tests share it. */
export async function createApp(
  config: AppConfig,
  options: AppModuleOptions = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, options), {
    bufferLogs: true,
    // Keeps the exact request bytes on req.rawBody: the inbound webhook signature covers them.
    rawBody: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  const httpLogger = requestLogger(config, options.logStream);
  app.use(httpLogger);
  if (config.role.api) {
    // The platform's events skip Express and Nest altogether (src/inbound/zoom-events.route.ts).
    const server = app.getHttpServer();
    const [express] = server.listeners('request') as RequestListener[];
    server.removeAllListeners('request');
    const inbound = app.get(InboundService);
    server.on(
      'request',
      zoomEventsRoute(inbound, app.get(MetricsService), httpLogger.logger, express),
    );
  }
  // Platform webhooks are verified over their exact bytes before anything parses them, so that
  // route takes its body raw (whatever the content type) and the parsers below then skip it:
  // a forged request is 401 whatever its body, and only a verified one can be 400 for bad JSON.
  app.useBodyParser('raw', { limit: BODY_LIMIT, type: isZoomEventsRequest });
  app.use('/api', requireJsonBody);
  app.useBodyParser('json', { limit: BODY_LIMIT });
  // The token endpoint also takes the form body of RFC 6749.
  app.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
  app.use(answerBodyParserErrors);
  app.useGlobalPipes(createValidationPipe());
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  if (config.role.api) setupSwagger(app, APP_VERSION);
  return app;
}

export { APP_VERSION };
