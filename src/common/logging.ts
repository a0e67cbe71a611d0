import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DestinationStream } from 'pino';
import { Params } from 'nestjs-pino';
import { AppConfig } from '../config/config.types';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * One JSON line per request, with a request id (taken from x-request-id when sane) echoed in
 * the response. Credentials never reach the log: redaction covers every header that can carry
 * one, and bodies are not logged at all.
 */
export function loggerParams(config: AppConfig, stream?: DestinationStream): Params {
  return {
    pinoHttp: [
      {
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
        genReqId: (req: IncomingMessage, res: ServerResponse) => {
          const given = req.headers['x-request-id'];
          const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
          res.setHeader('x-request-id', id);
          return id;
        },
        // Health probes and scrapes would drown the useful lines.
        autoLogging: { ignore: (req) => /^\/(health|metrics)\b/.test(req.url ?? '') },
        customLogLevel: (_req, res, err) =>
          err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      },
      ...(stream ? [stream] : []),
    ] as Params['pinoHttp'],
  };
}
