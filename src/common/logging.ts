import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import { AppConfig } from '../config/config.types';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request's id: its x-request-id when that is sane, else a new one; set on the response. */
export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

const CENSOR = '[redacted]';

/**
 * Header names that can carry a credential, by rule rather than by list, so a header the code
 * never heard of (Proxy-Authorization, X-Access-Token, X-Api-Key, X-Zm-Signature, Set-Cookie)
 * is masked too.
 */
const SECRET_HEADER = /authorization|token|secret|cookie|signature|passw|api[-_]?key|session/i;
/**
 * Query parameter names that can carry a credential: client_secret, access_token, token,
 * refresh_token, secret, password, api_key, signature, code (an OAuth code), …
 */
const SECRET_PARAM =
  /secret|token|passw|pwd|signature|^sig$|credential|api[-_]?key|^key$|^auth|^code$|session/i;
// A query parameter in a URL anywhere in a text: its name and value.
const QUERY_PARAM = /([?&;])([^=&#\s"'?;]+)=([^&#\s"';]*)/g;

/** A URL (or any text holding URLs) with the values of credential-bearing parameters masked. */
export function redactUrl(text: string): string {
  if (!text.includes('=')) return text;
  return text.replace(QUERY_PARAM, (whole, sep: string, name: string) =>
    SECRET_PARAM.test(safeDecode(name)) ? `${sep}${name}=${CENSOR}` : whole,
  );
}

function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** A parsed query with the values of credential-bearing parameters masked. */
function redactQuery(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  const names = Object.keys(query);
  if (!names.some((name) => SECRET_PARAM.test(name))) return query;
  const copy: Record<string, unknown> = {};
  for (const name of names) {
    copy[name] = SECRET_PARAM.test(name) ? CENSOR : (query as Record<string, unknown>)[name];
  }
  return copy;
}

/** Headers with the values of credential-bearing ones masked (the same object when none is). */
function redactHeaders<T extends object>(headers: T): T {
  const names = Object.keys(headers);
  if (!names.some((name) => SECRET_HEADER.test(name))) return headers;
  const copy = { ...headers } as Record<string, unknown>;
  for (const name of names) if (SECRET_HEADER.test(name)) copy[name] = CENSOR;
  return copy as T;
}

/** A request as the log line holds it, its credentials masked. */
function redactRequest<T extends { url?: unknown; query?: unknown; headers?: unknown }>(req: T): T {
  return {
    ...req,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    query: redactQuery(req.query),
    headers:
      typeof req.headers === 'object' && req.headers !== null
        ? redactHeaders(req.headers)
        : req.headers,
  };
}

const SERVICE = 'meeting-event-bridge';

/** The level and fields of every line of the process. */
function appPino(config: AppConfig, stream?: DestinationStream): PinoLogger {
  return pino(
    { level: config.logLevel, base: { service: SERVICE, role: config.role.name } },
    stream ?? stdout(),
  );
}

/**
 * The line of a start refused for its configuration, in the shape of every other line though
 * no configuration (LOG_LEVEL, APP_ROLE) could be read: one fatal line naming every problem,
 * written at once since the process exits next.
 */
export function logConfigProblems(
  problems: string[],
  stream: DestinationStream = pino.destination({ dest: 1, sync: true }),
): void {
  pino({ base: { service: SERVICE } }, stream).fatal(
    { context: 'Config', problems },
    `Invalid configuration: ${problems.join('; ')}`,
  );
}

/** A request as its completion line reads it, from Express or from the fast path alike. */
export interface ServedRequest extends IncomingMessage {
  id: string;
  query: Record<string, unknown>;
  params: Record<string, string | string[]>;
  /** Express keeps the URL as it came here; a router it passes through may cut `url`. */
  originalUrl?: string;
  /** The request's span while tracing is on (docs/operations.md): its line names the trace. */
  span?: Span | null;
}

export type CompletionLine = (
  level: 'error' | 'warn' | 'info',
  req: ServedRequest,
  res: ServerResponse,
  /** trace_id and span_id: the request's span, while tracing is on (docs/operations.md). */
  fields: { responseTime: number; err?: Error; trace_id?: string; span_id?: string },
  msg: string,
) => void;

/**
 * The writer of the one JSON line per finished request (src/telemetry/request-record.ts says when
 * and with what). Credentials never reach it: every header and query parameter whose name says
 * it can carry one is masked (in the URL too), whatever the answer, and bodies are not logged
 * at all. The request and response are serialised here, their secret headers replaced as they
 * are copied, rather than by pino's serializers and redaction, which cloned each line's
 * objects path by path (a large share of the fast path's time in a profile under load).
 */
export function completionLine(config: AppConfig, stream?: DestinationStream): CompletionLine {
  const log = appPino(config, stream);
  return (lineLevel, req, res, fields, msg) => {
    if (!log.isLevelEnabled(lineLevel)) return;
    const socket = req.socket;
    log[lineLevel](
      {
        req: redactRequest({
          id: req.id,
          method: req.method,
          url: req.originalUrl ?? req.url,
          query: req.query,
          params: req.params,
          headers: req.headers,
          remoteAddress: socket?.remoteAddress,
          remotePort: socket?.remotePort,
        }),
        res: {
          statusCode: res.headersSent ? res.statusCode : null,
          headers: redactHeaders(res.getHeaders()),
        },
        ...fields,
      },
      msg,
    );
  };
}

/** An error whose message or stack quotes a URL with a credential: a masked copy. */
function redactError(error: Error): Error {
  const message = redactUrl(error.message);
  const stack = error.stack === undefined ? undefined : redactUrl(error.stack);
  if (message === error.message && stack === error.stack) return error;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as Error, error);
  copy.message = message;
  copy.stack = stack;
  return copy;
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's account of its own start (a line per module, controller and route: some 230 of them)
 * would bury the few lines a person starting the service must read (docs/operations.md), so
 * it is logged at debug.
 */
const NEST_START_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * Lines of a failing start that src/main.ts says once, in words and naming the variable:
 * TypeORM's retries while PostgreSQL does not answer, and Nest's report of the error that
 * stopped the start. At debug they are still there for whoever asks for them.
 */
const SAID_BY_MAIN = (context: unknown, message: unknown): boolean =>
  context === 'ExceptionHandler' ||
  (context === 'TypeOrmModule' &&
    typeof message === 'string' &&
    message.startsWith('Unable to connect to the database'));

/** The level a line of Nest's is written at: its own, or debug for the lines above. */
export function nestLineLevel(level: Level, context: unknown, message: unknown): Level {
  if (level === 'info' && typeof context === 'string' && NEST_START_CONTEXTS.has(context)) {
    return 'debug';
  }
  return SAID_BY_MAIN(context, message) ? 'debug' : level;
}

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
  private call(given: Level, message: unknown, params: unknown[]): void {
    const level = nestLineLevel(given, params[params.length - 1], message);
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    const rest = params.slice(0, -1);
    if (params.length > 0) fields.context = params[params.length - 1];
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: redactError(message) }, ...(rest as []));
    } else if (typeof message === 'object' && message !== null) {
      // A message with fields (src/telemetry/tracing.ts inSpan) is redacted like a plain one.
      const { msg } = message as { msg?: unknown };
      const redacted = typeof msg === 'string' ? { msg: redactUrl(msg) } : {};
      this.pino[level]({ ...fields, ...message, ...redacted }, ...(rest as []));
    } else if (
      // Nest's exception handlers call error(message, stack, context).
      level === 'error' &&
      rest.length === 1 &&
      typeof rest[0] === 'string' &&
      /\n\s*at /.test(rest[0])
    ) {
      const err = new Error(redactUrl(String(message)));
      err.stack = redactUrl(rest[0]);
      this.pino.error({ ...fields, err });
    } else {
      // A message may quote a URL (a webhook's, the platform's) with a credential in its query.
      this.pino[level](fields, redactUrl(String(message)), ...(rest as []));
    }
  }
}

/**
 * A logger whose lines are written at once, for what the start says before the application
 * loads: loading it keeps the event loop busy for seconds (ts-node compiles as it goes), and
 * the buffered stdout's periodic flush cannot run until it is done. Nothing else has written
 * yet, so its lines cannot overtake buffered ones.
 */
export function unbufferedLogger(config: AppConfig): AppLogger {
  return new AppLogger(config, pino.destination({ dest: 1, sync: true }));
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
