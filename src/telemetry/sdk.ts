import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import type * as NodeHttpExport from '@opentelemetry/otlp-exporter-base/build/src/index-node-http';
import {
  JsonTraceSerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
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
  SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { TelemetryConfig } from '../config/config.types';
import { Tracing } from './tracing';

// The package's `node-http` entry, which this project's module resolution (node10) cannot type
// by its exports map: the types are taken from the file that entry points at.
const { createOtlpHttpExportDelegate, httpAgentFactoryFromOptions } =
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('@opentelemetry/otlp-exporter-base/node-http') as typeof NodeHttpExport;

/** Export timeout and the batch processor's settings: the SDK's defaults, written out. */
const EXPORT_TIMEOUT_MS = 10000;
const BATCH = {
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 1000,
  exportTimeoutMillis: EXPORT_TIMEOUT_MS,
};
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

/**
 * The OTLP/HTTP span exporter, built from the exporter package's own parts with every setting
 * given: the ready-made OTLPTraceExporter classes merge OTEL_EXPORTER_OTLP_* variables from the
 * environment into what they are given (headers are added, not replaced), and this service's
 * configuration comes from src/config alone.
 */
function otlpExporter(config: TelemetryConfig, endpoint: string): SpanExporter {
  const json = config.protocol === 'http/json';
  const delegate = createOtlpHttpExportDelegate(
    {
      url: `${endpoint}/v1/traces`,
      headers: () =>
        Promise.resolve({
          'Content-Type': json ? 'application/json' : 'application/x-protobuf',
        }),
      timeoutMillis: EXPORT_TIMEOUT_MS,
      concurrencyLimit: 30,
      compression: 'none',
      agentFactory: httpAgentFactoryFromOptions({ keepAlive: true }),
    },
    json ? JsonTraceSerializer : ProtobufTraceSerializer,
    'otlp_http_span_exporter',
    TraceExporterMetricsHelper,
    undefined,
  );
  return new OTLPExporterBase<ReadableSpan[]>(delegate);
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/**
 * The active span for log lines (Tracing.run): AsyncLocalStorage, registered only once some
 * app of the process traces, since once used it turns on promise hooks for every promise
 * (src/common/logging.ts says what that cost).
 */
function enableContext(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager();
  contextManager.enable();
  context.setGlobalContextManager(contextManager);
}

/**
 * Tracing for this process: off (Tracing.off, nothing loaded or started) while no endpoint is
 * configured. The provider is not registered as the global one, so several apps of one test
 * process keep their own; only the context manager is process-wide.
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
    spanProcessors: [new BatchSpanProcessor(otlpExporter(config, config.endpoint), BATCH)],
  });
  enableContext();
  return new Tracing(provider.getTracer('meeting-event-bridge', version), () =>
    provider.shutdown(),
  );
}
