import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AppModule, AppModuleOptions } from './app.module';
import { hardenHttpServer } from './common/http-server';
import { AppLogger, completionLine } from './common/logging';
import {
  BODY_LIMIT_BYTES,
  answerBodyParserErrors,
  documentJsonBodies,
  requireJsonBody,
  requireTokenBody,
} from './common/request-body';
import { limitJsonDepth } from './common/json-depth';
import { answerPreciseNumbers } from './common/precise-answers';
import { makeDocumentExact, refreshDatedExamples } from './common/openapi-exact';
import { RequestRecorder, recordRequests } from './telemetry/request-record';
import { stateConfiguredBrokers } from './webhooks/destination-document';
import { stateFilterLanguage } from './webhooks/filter-document';
import { isMultipartUpload } from './platform-api/platform-operations';
import { createValidationPipe } from './common/validation';
import { APP_VERSION } from './common/version';
import { AppConfig, Scope } from './config/config.types';
import { addNotificationSchemas } from './inbound/dto/zoom-event.dto';
import { isZoomEventsRequest } from './inbound/sources/webhook/webhook.controller';
import { WebhookReceiver } from './inbound/sources/webhook/webhook-receiver';
import {
  RequestListener,
  zoomEventsRoute,
  zoomEventsRouteAhead,
} from './inbound/sources/webhook/zoom-events.route';
import { describeCallbacks } from './webhooks/notification-callbacks';
import { MetricsService } from './metrics/metrics.service';
import { Tracing } from './telemetry/tracing';

// queues:admin is left out: no documented route takes it, and with it listed, "select all"
// in the Authorize dialog would ask every API client for a scope it lacks (invalid_scope).
const SCOPE_DESCRIPTIONS: Record<Exclude<Scope, 'queues:admin'>, string> = {
  'webhooks:read': 'Read webhook subscriptions and their delivery logs',
  'webhooks:write': 'Create, change, delete and test webhook subscriptions',
  'meetings:read': 'Read meetings, their registrants, polls and past instances',
  'meetings:write': 'Create, change, end and delete meetings, registrants and polls',
  'users:read': 'Read users and their settings',
  'users:write': 'Create, change, deactivate and delete users',
  'recordings:read': 'List and download cloud recordings',
  'recordings:write': 'Delete, recover and configure cloud recordings',
  'webinars:read': 'Read webinars, their registrants, panelists and past instances',
  'webinars:write': 'Create, change and delete webinars, registrants and panelists',
  'reports:read': 'Read account reports',
  'accounts:write': 'Install and remove platform accounts',
  'bridge:admin': "The operator's: inbound status and reconciliation runs",
  'attendance:read': 'Read the computed attendance of ended meetings and webinars',
};

/** Every tag the routes use, in the order Swagger UI shows them (a linter checks none is missing). */
const TAGS: Record<string, string> = {
  auth: 'Access tokens (OAuth 2.0 client credentials)',
  webhooks: 'Webhook subscriptions, their deliveries, redelivery and replay; the event catalog',
  events: 'Events that reached your webhooks',
  accounts: 'Platform accounts that installed the OAuth app: install, list, remove',
  inbound: 'The platform’s event notifications (called by the platform, not by clients)',
  meetings: 'Platform passthrough: Meetings',
  webinars: 'Platform passthrough: Webinars',
  users: 'Platform passthrough: Users',
  recordings: 'Platform passthrough: Cloud Recording, with file downloads',
  reports: 'Platform passthrough: Reports (read-only)',
  attendance: 'Computed attendance of ended meetings and webinars',
  console: 'Links into the web console',
  health: 'Liveness and readiness',
};

function setupSwagger(app: INestApplication, config: AppConfig, version: string): void {
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
      // Relative: the document is served by the service it describes, wherever it is mounted.
      .addServer('/', 'This service')
      .build(),
    // Tags are given by each route; the controller's class name would be a second, internal one.
    { autoTagControllers: false },
  );
  // package.json's UNLICENSED: no licence is granted. (DocumentBuilder would add an empty url.)
  document.info.license = { name: 'Proprietary' };
  document.tags = Object.entries(TAGS).map(([name, description]) => ({ name, description }));
  documentJsonBodies(document);
  addNotificationSchemas(document);
  describeCallbacks(document);
  makeDocumentExact(document);
  stateConfiguredBrokers(document, config.destinationBrokers);
  stateFilterLanguage(document);
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs-json',
    swaggerOptions: { persistAuthorization: true },
    // Examples bounded by today (a replay's window) are dated when the document is served.
    patchDocumentOnRequest: (_req, _res, served) => refreshDatedExamples(served),
  });
}

/** Builds the configured application without listening; main.ts and the tests share it. */
export async function createApp(
  config: AppConfig,
  options: AppModuleOptions = {},
): Promise<NestExpressApplication> {
  // Given at creation, not buffered for useLogger: a start that fails (PostgreSQL away) then
  // logs its retries and its end as JSON lines too, not as Nest's coloured text.
  const logger = new AppLogger(config, options.logStream);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    logger,
    // A failed start rejects (main.ts says why, naming the variable) rather than aborting.
    abortOnError: false,
    // Keeps the exact request bytes on req.rawBody: the inbound webhook signature covers them.
    rawBody: true,
    bodyParser: false,
  });
  const recorder = new RequestRecorder(
    app.get(MetricsService).httpRequests,
    completionLine(config, options.logStream),
  );
  app.use(recordRequests(recorder, config.role.api ? zoomEventsRouteAhead : undefined));
  const server = app.getHttpServer();
  if (config.role.api) {
    // The platform's events skip Express and Nest altogether (src/inbound/sources/webhook/zoom-events.route.ts).
    // Swapped before the server is hardened: hardening adds a 'request' listener of its own.
    const [express] = server.listeners('request') as RequestListener[];
    server.removeAllListeners('request');
    const receiver = app.get(WebhookReceiver);
    server.on('request', zoomEventsRoute(receiver, recorder, express, app.get(Tracing)));
  }
  hardenHttpServer(server, config.http, logger);
  // Platform webhooks are verified over their exact bytes before anything parses them, so that
  // route takes its body raw (whatever the content type) and the parsers below then skip it:
  // a forged request is 401 whatever its body, and only a verified one can be 400 for bad JSON.
  app.useBodyParser('raw', { limit: BODY_LIMIT_BYTES, type: isZoomEventsRequest });
  app.use(
    '/api',
    requireJsonBody((req) => isMultipartUpload(req.method, req.originalUrl)),
  );
  app.use('/oauth/token', requireTokenBody);
  app.useBodyParser('json', { limit: BODY_LIMIT_BYTES });
  // The token endpoint also takes the form body of RFC 6749.
  app.useBodyParser('urlencoded', { limit: BODY_LIMIT_BYTES, extended: false });
  app.use(answerBodyParserErrors);
  app.use(limitJsonDepth);
  app.useGlobalPipes(createValidationPipe());
  app.disable('x-powered-by');
  answerPreciseNumbers(app.getHttpAdapter().getInstance());
  app.set('trust proxy', config.trustProxy);
  if (config.role.api) setupSwagger(app, config, APP_VERSION);
  return app;
}

export { APP_VERSION };
