import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import type { Counter } from 'prom-client';
import { traceFields } from './tracing';
import { CompletionLine, ServedRequest, requestIdFor } from '../common/logging';

/**
 * Health probes and scrapes are counted but not logged: their lines would drown the others.
 * Nor is a browser's guess at /favicon.ico (the console names its own icon; Swagger UI too):
 * its 404 would be a warning with every header of the visit.
 */
const UNLOGGED = /^\/(health\b|metrics\b|favicon\.ico(?:$|\?))/;

/** The level of a request's completion line. */
const levelOf = (status: number, err?: Error): 'error' | 'warn' | 'info' =>
  err !== undefined || status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';

/**
 * How a finished request is recorded, whichever stack served it (Express and Nest through
 * recordRequests below, or /zoom/events' node:http fast path): http_requests_total by method,
 * route pattern and status, and one completion line with its level, its response time, an
 * `err` for a 5xx and the trace ids of its span. One writer for both, so the line and the
 * labels of a platform event cannot depend on whether its body came compressed.
 */
export class RequestRecorder {
  constructor(
    private readonly requests: Counter<'method' | 'route' | 'status'>,
    private readonly line: CompletionLine,
  ) {}

  /**
   * Records `req` once its answer `res` is sent or given up (the client gone first): `route`
   * is the label it is counted under, `started` when it arrived, `err` what the response
   * itself failed with. An answer never sent is not counted: it has no status.
   */
  finished(
    req: ServedRequest,
    res: ServerResponse,
    route: string,
    started: number,
    err?: Error,
  ): void {
    const status = res.statusCode;
    const ended = res.writableEnded;
    if (ended) this.requests.inc({ method: req.method, route, status: String(status) });
    if (UNLOGGED.test(req.originalUrl ?? req.url ?? '')) return;
    const responseTime = Date.now() - started;
    const level = levelOf(status, err);
    const ids = traceFields(req.span ?? null);
    if (err !== undefined || status >= 500) {
      const error = err ?? new Error(`failed with status code ${status}`);
      this.line(level, req, res, { responseTime, err: error, ...ids }, 'request errored');
    } else {
      const msg = ended && !req.readableAborted ? 'request completed' : 'request aborted';
      this.line(level, req, res, { responseTime, ...ids }, msg);
    }
  }
}

/** Names a request's span (a request served by Nest) for its completion line. */
export function recordSpan(req: IncomingMessage, span: Span | null): void {
  (req as ServedRequest).span = span;
}

/**
 * The route pattern Express matched, never the raw path (which would explode the labels). A
 * request refused before routing (by a body parser) has none: `routeAhead` may still know it.
 */
function routeOf(req: Request, routeAhead: (req: IncomingMessage) => string | undefined): string {
  const path = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : '';
  if (!path) return routeAhead(req) ?? 'unmatched';
  // Unknown URLs only ever match a catch-all route: one label for all of them.
  return path.includes('*') ? 'unmatched' : path;
}

/**
 * Express middleware giving every request its id (x-request-id, echoed) and recording it
 * with `recorder` when it finishes. Mounted ahead of the body parsers: as Nest module
 * middleware it would run after them, and a request they refuse (malformed JSON, over the
 * body limit) would get neither an id nor a line.
 */
export function recordRequests(
  recorder: RequestRecorder,
  routeAhead: (req: IncomingMessage) => string | undefined = () => undefined,
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const started = Date.now();
    const served = Object.assign(req, { id: requestIdFor(req, res) });
    const done = (err?: Error): void => {
      res.off('finish', done).off('close', done).off('error', done);
      recorder.finished(served, res, routeOf(req, routeAhead), started, err);
    };
    res.on('finish', done).on('close', done).on('error', done);
    next();
  };
}
