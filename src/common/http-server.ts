import type { LoggerService } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { errorBody } from './error-response';

export interface HttpServerLimits {
  /** Longest wait for a request's headers, from its first byte. */
  headersTimeoutMs: number;
  /** Longest wait for a whole request, body included, from its first byte. */
  requestTimeoutMs: number;
  /** Most connections open at once (HTTP_MAX_CONNECTIONS); past it, 503 with Retry-After. */
  maxConnections: number;
}

// Node finds expired requests by polling (every 30 s by default, which let a body sent at
// 1 byte/s hold a connection for 329 s under a 300 s limit); a second keeps the limits close.
const TIMEOUT_CHECK_INTERVAL_MS = 1000;
// After an error answer the peer may still be sending (a body behind oversized headers):
// closing at once with its bytes unread makes the kernel send a reset, and the peer never
// reads the answer. So the rest is read and dropped, for at most this long.
const LINGER_MS = 2000;
/** Node's default --max-http-header-size. */
const MAX_HEADER_BYTES = 16 * 1024;

interface ClientErrorAnswer {
  status: number;
  message: string;
  headers?: Record<string, string>;
}

/** Seconds a client turned away by the connection cap is told to wait. */
const FULL_RETRY_AFTER_SECONDS = 1;

function answerFor(error: NodeJS.ErrnoException, limits: HttpServerLimits): ClientErrorAnswer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        message: `Request headers are larger than the ${MAX_HEADER_BYTES / 1024} KiB accepted`,
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, message: 'Request chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        message:
          `Request was not received in time (headers within ${limits.headersTimeoutMs} ms, ` +
          `the whole request within ${limits.requestTimeoutMs} ms)`,
      };
    default:
      return { status: 400, message: `Request is not valid HTTP/1.1 (${error.code ?? 'error'})` };
  }
}

/** The answer as raw bytes, for when there is no ServerResponse to write it with. */
function rawAnswer({ status, message, headers = {} }: ClientErrorAnswer): string {
  const body = JSON.stringify(errorBody(status, message));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * Connections kept beyond HTTP_MAX_CONNECTIONS for the routes that must answer while clients
 * hold every other one: a tenth of the cap, at least 5.
 */
export const reservedConnections = (max: number): number => Math.max(5, Math.ceil(max / 10));

/**
 * What the reserve serves: the probes (a pod whose /health/live times out is restarted, which
 * frees nothing and loses its work) and the platform's events (which it retries only for a
 * while).
 */
const isReservedPath = (url: string | undefined): boolean => {
  const path = (url ?? '').split('?')[0];
  return path.startsWith('/health/') || path === '/zoom/events';
};

/**
 * Caps the open connections (HTTP_MAX_CONNECTIONS). Node's own server.maxConnections drops the
 * connection past the cap without a word, which the client sees as a reset and cannot tell
 * from a crash; here it gets a 503 with Retry-After and the connection is closed, never handed
 * to the HTTP parser. What the server listens with for 'connection' (Node's HTTP parser) is
 * called only for connections within the cap.
 *
 * Past the cap a reserve (reservedConnections) is still taken, for /health/* and /zoom/events
 * only: which route a connection wants is known once its request's headers are in, so a
 * request for any other route on a reserve connection is answered 503 then and its connection
 * closed. Clients holding every connection of the cap (slow bodies, say) then keep neither the
 * probes nor the platform out.
 */
function capConnections(server: Server, max: number, logger: LoggerService): void {
  const serve = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const reserve = reservedConnections(max);
  const onReserve = new WeakSet<Socket>();
  let open = 0;
  let openOnReserve = 0;
  let refusedSinceLog = 0;
  const answer: ClientErrorAnswer = {
    status: 503,
    message: `The server has ${max} connections open, its limit; retry shortly`,
    headers: { 'Retry-After': String(FULL_RETRY_AFTER_SECONDS) },
  };
  const full = rawAnswer(answer);
  const logRefusal = () => {
    // One line per burst, not per connection: a flood must not flood the log too.
    if (refusedSinceLog++ === 0) {
      logger.warn(`answered 503 before the application: ${answer.message}`, 'HttpServer');
    }
  };
  server.on('connection', (socket: Socket) => {
    if (open < max) {
      open += 1;
      refusedSinceLog = 0;
      socket.once('close', () => (open -= 1));
    } else if (openOnReserve < reserve) {
      openOnReserve += 1;
      onReserve.add(socket);
      socket.once('close', () => (openOnReserve -= 1));
    } else {
      logRefusal();
      socket.on('error', () => socket.destroy());
      socket.end(full);
      lingerThenClose(socket);
      return;
    }
    for (const listener of serve) listener.call(server, socket);
  });

  const handle = server.listeners('request') as ((
    req: IncomingMessage,
    res: ServerResponse,
  ) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (onReserve.has(req.socket) && !isReservedPath(req.url)) {
      logRefusal();
      const body = JSON.stringify(errorBody(answer.status, answer.message));
      res.shouldKeepAlive = false;
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        ...answer.headers,
        connection: 'close',
      });
      res.end(body);
      // Its body, if any, is read and dropped: unread, the close would be a reset.
      req.resume();
      return;
    }
    for (const listener of handle) listener.call(server, req, res);
  });
}

function lingerThenClose(socket: Duplex): void {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.resume();
}

/**
 * Sets the server's header and request timeouts and answers what Node refuses before the
 * application sees it (a malformed request line, headers over the limit, a timeout) with the
 * docs/api.md#errors error shape instead of Node's bare answer followed at once by a close, which the
 * peer sees as a reset when it is still sending. Each such answer is logged.
 */
export function hardenHttpServer(
  server: Server,
  limits: HttpServerLimits,
  logger: LoggerService,
): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // The createServer option, also read from the server when it starts listening (untyped).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    TIMEOUT_CHECK_INTERVAL_MS;
  capConnections(server, limits.maxConnections, logger);

  // The response in flight on each socket: a request that times out while its body is still
  // arriving is answered through it, so that the application cannot write a second answer.
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    inFlight.set(req.socket, res);
    res.once('finish', () => inFlight.get(req.socket) === res && inFlight.delete(req.socket));
  });

  // Node hands CONNECT to 'connect' listeners and, with none, closes without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const answer = { status: 405, message: 'Method CONNECT is not supported: this is no proxy' };
    logger.warn(`answered 405 before the application: ${answer.message}`, 'HttpServer');
    socket.on('error', () => socket.destroy());
    socket.end(rawAnswer(answer));
    lingerThenClose(socket);
  });

  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser keeps reporting the same error for every later chunk: answer once.
    if (answered.has(socket)) return;
    answered.add(socket);
    const res = inFlight.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || res?.headersSent) {
      socket.destroy();
      return;
    }
    const answer = answerFor(error, limits);
    logger.warn(
      `answered ${answer.status} before the application: ${answer.message} ` +
        `(from ${(socket as { remoteAddress?: string }).remoteAddress ?? 'unknown'})`,
      'HttpServer',
    );
    if (res) {
      const body = JSON.stringify(errorBody(answer.status, answer.message));
      res.shouldKeepAlive = false;
      res.writeHead(answer.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        connection: 'close',
      });
      res.end(body);
    } else {
      socket.end(rawAnswer(answer));
    }
    lingerThenClose(socket);
  });
}
