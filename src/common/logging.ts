import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DestinationStream } from 'pino';
import { Params } from 'nestjs-pino';
import { HttpLogger, Options, pinoHttp } from 'pino-http';
import { AppConfig } from '../config/config.types';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request's id: its x-request-id when that is sane, else a new one; set on the response. */
export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

/** The level of a request's completion line. */
export const completionLevel = (status: number, err?: unknown): 'error' | 'warn' | 'info' =>
  err || status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';

/**
 * One JSON line per request, with a request id (taken from x-request-id when sane) echoed in
 * the response. Credentials never reach the log: redaction covers every header that can carry
 * one, and bodies are not logged at all.
 */
function httpLoggerOptions(config: AppConfig): Options {
  return {
    level: config.logLevel,
    base: { service: 'meeting-event-bridge', role: config.role.name },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["x-zm-signature"]',
        'res.headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
    genReqId: requestIdFor,
    // Health probes and scrapes would drown the useful lines.
    autoLogging: { ignore: (req) => /^\/(health|metrics)\b/.test(req.url ?? '') },
    customLogLevel: (_req, res, err) => completionLevel(res.statusCode, err),
  };
}

/**
 * The request logger, to be mounted ahead of the body parsers: as Nest module middleware it
 * would run after them, and a request they refuse (malformed JSON, over 1 MiB) would get
 * neither a request id nor a log line.
 */
export function requestLogger(config: AppConfig, stream?: DestinationStream): HttpLogger {
  const options = httpLoggerOptions(config);
  return stream ? pinoHttp(options, stream) : pinoHttp(options);
}

/** For LoggerModule: it binds the req.log that requestLogger set, and logs outside requests. */
export function loggerParams(config: AppConfig, stream?: DestinationStream): Params {
  const options = httpLoggerOptions(config);
  return { pinoHttp: stream ? [options, stream] : options, useExisting: true };
}
