import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
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

/** Request headers that can carry a credential: their values never reach the log. */
const SECRET_REQUEST_HEADERS = ['authorization', 'cookie', 'x-zm-signature'];
const SECRET_RESPONSE_HEADERS = ['set-cookie'];
const CENSOR = '[redacted]';

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
        ...SECRET_REQUEST_HEADERS.map((name) => `req.headers["${name}"]`),
        ...SECRET_RESPONSE_HEADERS.map((name) => `res.headers["${name}"]`),
      ],
      censor: CENSOR,
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
  return pinoHttp(httpLoggerOptions(config), stream ?? stdout());
}

/** A plain pino logger with the request logger's level and fields, on the same stdout. */
function appPino(config: AppConfig, stream?: DestinationStream): PinoLogger {
  const { level, base } = httpLoggerOptions(config);
  return pino({ level, base }, stream ?? stdout());
}

/** A request served outside Express, as the completion line needs it. */
export interface ServedRequest extends IncomingMessage {
  id: string;
  query: Record<string, unknown>;
  params: Record<string, string>;
}

export type CompletionLine = (
  level: 'error' | 'warn' | 'info',
  req: ServedRequest,
  res: ServerResponse,
  /** trace_id and span_id: the request's span, while tracing is on (SPEC §12). */
  fields: { responseTime: number; err?: Error; trace_id?: string; span_id?: string },
  msg: string,
) => void;

/**
 * The completion line of a request served outside Express (POST /zoom/events): the fields and
 * censoring of requestLogger's line, written to the same stdout. The request and response are
 * serialised here, their secret headers replaced as they are copied, rather than by pino's
 * serializers and redaction, which cloned each line's objects path by path (about a tenth of
 * the route's time in a profile under load).
 */
export function completionLine(config: AppConfig, stream?: DestinationStream): CompletionLine {
  const log = appPino(config, stream);
  return (lineLevel, req, res, fields, msg) => {
    if (!log.isLevelEnabled(lineLevel)) return;
    const socket = req.socket;
    log[lineLevel](
      {
        req: {
          id: req.id,
          method: req.method,
          url: req.url,
          query: req.query,
          params: req.params,
          headers: censored(req.headers, SECRET_REQUEST_HEADERS),
          remoteAddress: socket?.remoteAddress,
          remotePort: socket?.remotePort,
        },
        res: {
          statusCode: res.headersSent ? res.statusCode : null,
          headers: censored(res.getHeaders(), SECRET_RESPONSE_HEADERS),
        },
        ...fields,
      },
      msg,
    );
  };
}

function censored<T extends object>(headers: T, secret: readonly string[]): T {
  if (!secret.some((name) => name in headers)) return headers;
  const copy = { ...headers } as Record<string, unknown>;
  for (const name of secret) if (name in copy) copy[name] = CENSOR;
  return copy as T;
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's own lines (Logger in services and in Nest itself) as pino lines on the same stdout,
 * `context` naming the class, as nestjs-pino wrote them. Lines written while serving a request
 * do not carry its id (its completion line does): binding them to it takes AsyncLocalStorage,
 * which once used turns on promise hooks for every promise in the process, the platform's
 * events and the deliveries included (about 3 % of the app's CPU in a burst, with the garbage
 * they make). One per app, so each app of a test process writes to its own stream.
 */
export class AppLogger implements LoggerService {
  private readonly pino: PinoLogger;

  constructor(config: AppConfig, stream?: DestinationStream) {
    this.pino = appPino(config, stream);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.call('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.call('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.call('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.call('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.call('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.call('fatal', message, params);
  }

  /** Nest passes the context last; an error may come with its stack as a string before it. */
  private call(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = params.slice(0, -1);
    if (params.length > 0) fields.context = params[params.length - 1];
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, ...(rest as []));
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...message }, ...(rest as []));
    } else if (
      // Nest's exception handlers call error(message, stack, context).
      level === 'error' &&
      rest.length === 1 &&
      typeof rest[0] === 'string' &&
      /\n\s*at /.test(rest[0])
    ) {
      const err = new Error(String(message));
      err.stack = rest[0];
      this.pino.error({ ...fields, err });
    } else {
      this.pino[level](fields, String(message), ...(rest as []));
    }
  }
}

/** Lines gather up to this many bytes before one write; at most LOG_FLUSH_MS late. */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 100;
let stdoutStream: DestinationStream | undefined;

/**
 * stdout, shared by every logger of the process and buffered: one write for many lines rather
 * than one each (on a busy API process, a write per request line cost more than the line), so
 * a line may reach stdout up to LOG_FLUSH_MS late. One writer keeps lines whole; what is
 * buffered is written out when the process exits (pino flushes its destinations then).
 */
function stdout(): DestinationStream {
  stdoutStream ??= pino.destination({
    dest: 1,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  });
  return stdoutStream;
}
