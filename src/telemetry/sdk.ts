import {
  ExportResponse,
  ExporterMetrics,
  IExporterTransport,
  OTLPExporterBase,
  createOtlpNetworkExportDelegate,
} from '@opentelemetry/otlp-exporter-base';
import { JsonTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type {
  IExportTraceServiceResponse,
  IExporterMetricsHelper,
  ISerializer,
} from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  ReadableSpan,
  Sampler,
  SpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { Agent, request } from 'undici';
import { TelemetryConfig } from '../config/config.types';
import { SerializingBatchSpanProcessor } from './serializing-batch-span-processor';
import { SpanBatchMetricsHelper, SpanBatchSerializer } from './otlp-protobuf';
import { Tracing } from './tracing';

/** Export timeout and the SDK batch processor's settings (http/json): its defaults, written out. */
const EXPORT_TIMEOUT_MS = 10000;
const BATCH = {
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 1000,
  exportTimeoutMillis: EXPORT_TIMEOUT_MS,
};
/** Exports the SDK's processor may have under way: it sends one batch at a time. */
const EXPORTS_IN_FLIGHT = 30;
/**
 * Batches of encoded spans (http/protobuf): larger than the SDK's, since they wait as bytes and
 * part of a request's cost is the same however many spans it carries. A few may be in flight
 * (a collector that is slow or down keeps a few megabytes of spans waiting, the rest dropped).
 */
const ENCODED_BATCH = { maxExportBatchSize: 2048, scheduledDelayMillis: 1000 };
const ENCODED_BATCHES_IN_FLIGHT = 4;
const UNLIMITED = Infinity;
/** The SDK's default limits, written out so that it has nothing left to look up. */
const LIMITS = {
  attributeValueLengthLimit: UNLIMITED,
  attributeCountLimit: 128,
};
const SPAN_LIMITS = {
  ...LIMITS,
  linkCountLimit: 128,
  eventCountLimit: 128,
  attributePerEventCountLimit: 128,
  attributePerLinkCountLimit: 128,
};

export function samplerOf(config: TelemetryConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** Answers a collector may give to a busy moment: the batch is sent again (OTLP/HTTP). */
const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * POSTs serialised batches to the collector through undici, as the deliveries do. The
 * package's own node transport loads node:http with a dynamic import() on its first export,
 * which the test runner's module sandbox cannot run.
 */
function undiciTransport(url: string, contentType: string): IExporterTransport {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 4 });
  return {
    async send(data: Uint8Array, timeoutMillis: number): Promise<ExportResponse> {
      try {
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': contentType },
          body: data,
          signal: AbortSignal.timeout(timeoutMillis),
        });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) return { status: 'success' };
        const error = new Error(`the collector answered ${res.statusCode}`);
        if (!RETRYABLE.has(res.statusCode)) return { status: 'failure', error };
        const seconds = Number(res.headers['retry-after']);
        return {
          status: 'retryable',
          error,
          ...(Number.isFinite(seconds) ? { retryInMillis: seconds * 1000 } : {}),
        };
      } catch (error) {
        return { status: 'retryable', error: error as Error };
      }
    },
    shutdown() {
      void agent.close();
    },
  };
}

/**
 * An OTLP/HTTP exporter of `Internal` (spans, or span batches), from the exporter package's
 * parts with every setting given: the ready-made OTLPTraceExporter classes merge
 * OTEL_EXPORTER_OTLP_* variables from the environment into what they are given (headers are
 * added, not replaced), and this service's configuration comes from src/config alone.
 */
function otlpExporter<Internal>(
  endpoint: string,
  serializer: ISerializer<Internal, IExportTraceServiceResponse>,
  metricsHelper: IExporterMetricsHelper<Internal>,
  contentType: string,
  concurrencyLimit: number,
): OTLPExporterBase<Internal> {
  const url = `${endpoint}/v1/traces`;
  const options = {
    timeoutMillis: EXPORT_TIMEOUT_MS,
    concurrencyLimit,
    compression: 'none' as const,
  };
  const delegate = createOtlpNetworkExportDelegate(
    options,
    serializer,
    new ExporterMetrics<Internal>({
      componentType: 'otlp_http_span_exporter',
      metricsHelper,
      url,
      meterProvider: undefined,
      responseAttributesFromError: () => ({}),
    }),
    undiciTransport(url, contentType),
  );
  return new OTLPExporterBase<Internal>(delegate);
}

/**
 * The batching processor of the configured protocol: http/protobuf (the default) serialises
 * each span as it ends (SerializingBatchSpanProcessor); http/json keeps the SDK's processor
 * and serializer.
 */
function spanProcessorOf(config: TelemetryConfig, endpoint: string): SpanProcessor {
  if (config.protocol === 'http/json') {
    const exporter = otlpExporter<ReadableSpan[]>(
      endpoint,
      JsonTraceSerializer,
      TraceExporterMetricsHelper,
      'application/json',
      EXPORTS_IN_FLIGHT,
    );
    return new BatchSpanProcessor(exporter, BATCH);
  }
  const exporter = otlpExporter(
    endpoint,
    SpanBatchSerializer,
    SpanBatchMetricsHelper,
    'application/x-protobuf',
    ENCODED_BATCHES_IN_FLIGHT,
  );
  return new SerializingBatchSpanProcessor(exporter, ENCODED_BATCH);
}

/**
 * Tracing for this process: off (Tracing.off, nothing loaded or started) while no endpoint is
 * configured. The provider is not registered as the global one, so several apps of one test
 * process keep their own, and no context manager is (spans name their parents explicitly).
 */
export function createTracing(config: TelemetryConfig, version: string): Tracing {
  if (config.endpoint === null) return Tracing.off;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: version,
    }),
    sampler: samplerOf(config),
    generalLimits: LIMITS,
    spanLimits: SPAN_LIMITS,
    forceFlushTimeoutMillis: EXPORT_TIMEOUT_MS,
    spanProcessors: [spanProcessorOf(config, config.endpoint)],
  });
  return new Tracing(
    provider.getTracer('meeting-event-bridge', version),
    () => provider.shutdown(),
    () => provider.forceFlush(),
  );
}
