import {
  Attributes,
  Context,
  ROOT_CONTEXT,
  Span,
  SpanKind,
  SpanStatusCode,
  Tracer,
  context,
  trace,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { performance } from 'node:perf_hooks';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';

/** The attributes this service adds to its spans (docs/operations.md says what each means). */
export const SPAN_ATTRIBUTES = {
  zoomEvent: 'zoom.event',
  zoomTrackingId: 'zoom.tracking_id',
  inboundId: 'bridge.inbound_id',
  outcome: 'bridge.outcome',
  event: 'bridge.event',
  eventId: 'bridge.event_id',
  deliveries: 'bridge.deliveries',
  webhookId: 'bridge.webhook_id',
  deliveryId: 'bridge.delivery_id',
  attempt: 'bridge.attempt',
  destinationType: 'bridge.destination.type',
  deliveryStatus: 'bridge.delivery.status',
} as const;

/** What an attempt span needs of its delivery. */
export interface TracedDelivery {
  id: string;
  webhookId: string;
  event: string;
  /** The http destination's URL; null for a broker destination (docs/destinations.md). */
  url: string | null;
  /** Its destination's type; http when absent. */
  destination?: { type: string };
  /** The stored W3C traceparent of the span that published it (null: none was recorded). */
  traceContext?: string | null;
}

/** How an attempt ended, as its span records it. */
export interface TracedAttemptResult {
  statusCode: number | null;
  error: string | null;
  ok: boolean;
}

const hex2 = (flags: number) => (flags & 0xff).toString(16).padStart(2, '0');

/** The URL as attributes: no credentials, no query (a receiver's token often rides in it). */
function urlAttributesOf(url: string): Attributes {
  try {
    const parsed = new URL(url);
    const port = parsed.port
      ? Number(parsed.port)
      : parsed.protocol === 'https:'
        ? 443
        : parsed.protocol === 'http:'
          ? 80
          : undefined;
    return {
      [ATTR_URL_FULL]: `${parsed.protocol}//${parsed.host}${parsed.pathname}`,
      [ATTR_SERVER_ADDRESS]: parsed.hostname,
      ...(port === undefined ? {} : { [ATTR_SERVER_PORT]: port }),
    };
  } catch {
    return {};
  }
}

/** The request span's attributes known at its start, per scheme. */
const INBOUND_ATTRIBUTES = {
  http: inboundAttributes('http'),
  https: inboundAttributes('https'),
};

function inboundAttributes(scheme: 'http' | 'https'): Readonly<Attributes> {
  return Object.freeze({
    [ATTR_HTTP_REQUEST_METHOD]: 'POST',
    [ATTR_HTTP_ROUTE]: '/zoom/events',
    [ATTR_URL_PATH]: '/zoom/events',
    [ATTR_URL_SCHEME]: scheme,
  });
}

/** How many URLs' attributes are kept; the cache starts over when it is full. */
const URL_CACHE_SIZE = 1024;
const urlCache = new Map<string, Readonly<Attributes>>();

/**
 * The attributes of a URL, parsed once: every attempt to a webhook carries its URL's, and
 * parsing it was the dearest part of starting an attempt's span.
 */
function urlAttributes(url: string): Readonly<Attributes> {
  let attributes = urlCache.get(url);
  if (attributes === undefined) {
    if (urlCache.size >= URL_CACHE_SIZE) urlCache.clear();
    attributes = Object.freeze(urlAttributesOf(url));
    urlCache.set(url, attributes);
  }
  return attributes;
}

/**
 * The service's spans (docs/operations.md), started explicitly where the work is rather than by
 * auto-instrumentation: the hot paths (POST /zoom/events, the batched ingest statement, the
 * delivery attempts) would each pay for patched http, pg and ioredis spans nobody asked for.
 * Parents are passed explicitly (a span, or a stored traceparent), so a trace crosses the
 * batched statements and the queue, and processes, and no context manager is needed. `Tracing.off` (no endpoint configured)
 * starts nothing: every method returns at once, and the hooks in the hot paths cost a call.
 */
export class Tracing {
  static readonly off = new Tracing(null);

  constructor(
    private readonly tracer: Tracer | null,
    private readonly onShutdown: () => Promise<void> = () => Promise.resolve(),
    private readonly onFlush: () => Promise<void> = () => Promise.resolve(),
  ) {}

  get enabled(): boolean {
    return this.tracer !== null;
  }

  /**
   * Starts a span and then gives it its attributes: given to startSpan, the SDK would copy and
   * check them twice more for the sampler, and none of the configurable samplers reads them.
   */
  private start(
    name: string,
    kind: SpanKind,
    parent: Context,
    attributes?: Attributes,
    startTime?: number,
  ): Span {
    const span = this.tracer!.startSpan(name, { kind, startTime }, parent);
    if (attributes !== undefined) span.setAttributes(attributes);
    return span;
  }

  /** The root span of one POST /zoom/events request (HTTP server conventions). */
  startInbound(scheme: 'http' | 'https' = 'http'): Span | null {
    if (this.tracer === null) return null;
    return this.start(
      'POST /zoom/events',
      SpanKind.SERVER,
      ROOT_CONTEXT,
      INBOUND_ATTRIBUTES[scheme],
    );
  }

  /** Ends a server span with its answer's status: an error only for 5xx, as the conventions say. */
  endServer(span: Span | null, status: number): void {
    if (span === null) return;
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  /**
   * The ingest's spans under the request's: `bridge.map`, from `mappingFrom` (performance.now()
   * as the mapping began) until now, and, for an event published in the statement that stores
   * it, `bridge.publish`, returned open for its caller to end once that statement has run.
   * Null when nothing is published inline (or there is no parent).
   */
  ingestSpans(
    parent: Span | null,
    zoomEvent: string,
    mappingFrom: number,
    published: { kind: string; id: string } | null,
  ): Span | null {
    if (this.tracer === null || parent === null) return null;
    const under = trace.setSpan(ROOT_CONTEXT, parent);
    const mapping = this.start(
      'bridge.map',
      SpanKind.INTERNAL,
      under,
      published === null
        ? { [SPAN_ATTRIBUTES.zoomEvent]: zoomEvent }
        : { [SPAN_ATTRIBUTES.zoomEvent]: zoomEvent, [SPAN_ATTRIBUTES.event]: published.kind },
      mappingFrom,
    );
    const publishing =
      published === null
        ? null
        : this.start('bridge.publish', SpanKind.INTERNAL, under, {
            [SPAN_ATTRIBUTES.event]: published.kind,
            [SPAN_ATTRIBUTES.eventId]: published.id,
          });
    // Given a start time, the SDK ends a span on the wall clock unless told when: the same
    // clock as its start keeps its duration true.
    mapping.end(performance.now());
    return publishing;
  }

  /** A span under a stored traceparent (a new trace when there is none). */
  fromStored(
    traceContext: string | null | undefined,
    name: string,
    kind: SpanKind,
    attributes?: Attributes,
  ): Span | null {
    if (this.tracer === null) return null;
    return this.start(name, kind, contextOf(traceContext), attributes);
  }

  /** A span starting a trace of its own (a test delivery). */
  root(name: string, attributes?: Attributes): Span | null {
    if (this.tracer === null) return null;
    return this.start(name, SpanKind.INTERNAL, ROOT_CONTEXT, attributes);
  }

  /**
   * The span of one delivery attempt, in the trace its delivery was published in: an HTTP
   * client span (POST), with the delivery's identity.
   */
  startAttempt(delivery: TracedDelivery, attempt: number): Span | null {
    if (this.tracer === null) return null;
    const type = delivery.destination?.type ?? 'http';
    // A broker attempt is a publish (messaging conventions' operation name), not an HTTP call.
    const http = type === 'http' && delivery.url !== null;
    const attributes: Attributes = http
      ? { [ATTR_HTTP_REQUEST_METHOD]: 'POST', ...urlAttributes(delivery.url!) }
      : {};
    attributes[SPAN_ATTRIBUTES.webhookId] = delivery.webhookId;
    attributes[SPAN_ATTRIBUTES.deliveryId] = delivery.id;
    attributes[SPAN_ATTRIBUTES.event] = delivery.event;
    attributes[SPAN_ATTRIBUTES.attempt] = attempt;
    attributes[SPAN_ATTRIBUTES.destinationType] = type;
    return this.fromStored(
      delivery.traceContext,
      http ? 'POST' : 'publish',
      SpanKind.CLIENT,
      attributes,
    );
  }

  /**
   * A call to the platform's API (HTTP client conventions), under the active span if any; the
   * platform's answer names its x-zm-trackingid (endClient).
   */
  startClient(method: string, url: string): Span | null {
    if (this.tracer === null) return null;
    return this.start(method, SpanKind.CLIENT, context.active(), {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      ...urlAttributesOf(url),
    });
  }

  /** Ends a client span with the answer's status (an error from 400 on) or the failure. */
  endClient(span: Span | null, status: number | null, trackingId?: string | null, error?: unknown) {
    if (span === null) return;
    if (trackingId) span.setAttribute(SPAN_ATTRIBUTES.zoomTrackingId, trackingId);
    if (status !== null) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (status >= 400) {
        span.setAttribute(ATTR_ERROR_TYPE, String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    } else {
      this.failed(span, error);
    }
    span.end();
  }

  /** Records an attempt's answer (or its error) on its span. */
  attemptResult(span: Span | null, result: TracedAttemptResult, status: string): void {
    if (span === null) return;
    if (result.statusCode !== null) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
    }
    span.setAttribute(SPAN_ATTRIBUTES.deliveryStatus, status);
    if (!result.ok) {
      span.setAttribute(
        ATTR_ERROR_TYPE,
        result.statusCode === null ? 'request_failed' : String(result.statusCode),
      );
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
    }
  }

  /** Marks a span failed by an exception. */
  failed(span: Span | null, error: unknown): void {
    if (span === null) return;
    const err = error instanceof Error ? error : new Error(String(error));
    span.recordException(err);
    span.setAttribute(ATTR_ERROR_TYPE, err.name);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  }

  /** Exports the spans buffered so far (the bench and tests; shutdown does it too). */
  flush(): Promise<void> {
    return this.onFlush();
  }

  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void> {
    return this.onShutdown();
  }
}

/** The W3C traceparent of a span (what is stored with a delivery and sent as a header). */
export function traceparentOf(span: Span | null): string | null {
  if (span === null) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${hex2(traceFlags)}`;
}

/** The context a stored traceparent names, or the root context when there is none (or it is bad). */
export function contextOf(traceContext: string | null | undefined): Context {
  if (!traceContext) return ROOT_CONTEXT;
  const parent = parseTraceParent(traceContext);
  return parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
}

/**
 * `trace_id` and `span_id` of a span, for the log lines written in it (docs/operations.md); empty without
 * one. Passed explicitly rather than found through an active context: AsyncLocalStorage would
 * turn on promise hooks for every promise of the process (src/common/logging.ts).
 */
export function traceFields(span: Span | null): { trace_id?: string; span_id?: string } {
  if (span === null) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** A log message written in `span`: with its trace_id and span_id, or as it is without one. */
export function inSpan(
  span: Span | null,
  message: string,
): string | { msg: string; trace_id?: string; span_id?: string } {
  return span === null ? message : { msg: message, ...traceFields(span) };
}
