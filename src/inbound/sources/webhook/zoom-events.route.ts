import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import { parse as parseQuery } from 'node:querystring';
import { errorAnswer } from '../../../common/all-exceptions.filter';
import { ServedRequest, requestIdFor } from '../../../common/logging';
import { BODY_LIMIT_BYTES, bodyParserError } from '../../../common/request-body';
import { RequestRecorder } from '../../../telemetry/request-record';
import { Tracing } from '../../../telemetry/tracing';
import { ZOOM_EVENTS_PATH, isZoomEventsRequest } from './webhook.controller';
import { WebhookReceiver } from './webhook-receiver';

/** The route label Express gives these requests in http_requests_total. */
const ROUTE = `/${ZOOM_EVENTS_PATH}`;

/**
 * The label of a request for this route that Express's body parser refused before routing (a
 * compressed body over the limit), so that it is counted as the fast path counts it.
 */
export const zoomEventsRouteAhead = (req: IncomingMessage): string | undefined =>
  isZoomEventsRequest(req) ? ROUTE : undefined;

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The body, read by raw-body with the options body-parser gives it on the Express path (the
 * limit, Content-Length checked), so both fail alike. On a failure the rest is read and
 * dropped, as body-parser does, so that the answer (a 413) reaches a client still sending.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return getRawBody(req, {
    length: req.headers['content-length'],
    limit: BODY_LIMIT_BYTES,
  }).catch((error: unknown) => {
    req.resume();
    return new Promise<Buffer>((_resolve, reject) => {
      if (req.complete || req.destroyed) reject(error as Error);
      else
        req.once('end', () => reject(error as Error)).once('close', () => reject(error as Error));
    });
  });
}

/**
 * POST /zoom/events served straight from node:http, ahead of Express and Nest: the platform's
 * events are the service's hot path, and the middleware chain cost more than the work. The
 * same WebhookReceiver answers as through the controller, errors take the filter's shape
 * (errorAnswer), the body its limit (BODY_LIMIT_BYTES), the request id is set the same way,
 * and the same recorder counts it and writes its line as for every route. A body with a
 * Content-Encoding goes the Express way, where body-parser inflates it; every other request too.
 */
export function zoomEventsRoute(
  receiver: WebhookReceiver,
  recorder: RequestRecorder,
  next: RequestListener,
  tracing: Tracing = Tracing.off,
): RequestListener {
  return (req, res) => {
    const encoding = req.headers['content-encoding'];
    if (!isZoomEventsRequest(req) || (encoding !== undefined && encoding !== 'identity')) {
      next(req, res);
      return;
    }
    const started = Date.now();
    // The root span of the event's trace (docs/operations.md); null while tracing is off.
    const span = tracing.startInbound();
    const url = req.url ?? '';
    const q = url.indexOf('?');
    // What the recorder reads off an Express request.
    const served: ServedRequest = Object.assign(req, {
      id: requestIdFor(req, res),
      query: q < 0 ? {} : { ...parseQuery(url.slice(q + 1)) },
      params: {},
      span,
    });
    const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
      // The server's clientError handler may have answered already (a request timeout while
      // the body was arriving, src/common/http-server.ts): that answer stands.
      if (res.headersSent) return;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.setHeader('content-length', Buffer.byteLength(body));
      res.statusCode = status;
      res.end(body);
      tracing.endServer(span, status);
      recorder.finished(served, res, ROUTE, started);
    };
    readBody(req)
      .then((raw) => receiver.receive(req.headers, raw, span))
      .then(
        (result) => answer(200, JSON.stringify(result)),
        (error: unknown) => {
          const { body, headers } = errorAnswer(bodyParserError(error));
          answer(body.statusCode, JSON.stringify(body), headers);
        },
      );
  };
}
