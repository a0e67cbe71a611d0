import { ConfigError, loadConfig } from '../config/load-config';
import { TelemetryConfig } from '../config/config.types';
import { createTracing, samplerOf } from './sdk';
import { Tracing, contextOf, traceparentOf } from './tracing';

const base: TelemetryConfig = {
  endpoint: null,
  protocol: 'http/protobuf',
  serviceName: 'meeting-event-bridge',
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('tracing configuration (OTEL_*)', () => {
  it('defaults to off, http/protobuf, parentbased_always_on', () => {
    expect(loadConfig({}).telemetry).toEqual(base);
  });

  it('reads every variable, the endpoint without its trailing slash', () => {
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'bridge-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }).telemetry,
    ).toEqual({
      endpoint: 'http://collector:4318',
      protocol: 'http/json',
      serviceName: 'bridge-eu',
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
  });

  it('refuses bad values, naming each variable', () => {
    expect(
      problemsOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'jaeger_remote',
        OTEL_TRACES_SAMPLER_ARG: '1.5',
      }),
    ).toEqual([
      expect.stringContaining('OTEL_TRACES_SAMPLER must be one of'),
      'OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "1.5"',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be a http: or https: URL',
      expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL must be one of'),
    ]);
  });
});

describe('samplerOf', () => {
  it.each([
    ['always_on', 'AlwaysOnSampler'],
    ['always_off', 'AlwaysOffSampler'],
    ['traceidratio', 'TraceIdRatioBased{0.5}'],
    ['parentbased_always_on', 'ParentBased{root=AlwaysOnSampler'],
    ['parentbased_always_off', 'ParentBased{root=AlwaysOffSampler'],
    ['parentbased_traceidratio', 'ParentBased{root=TraceIdRatioBased{0.5}'],
  ] as const)('%s', (sampler, described) => {
    expect(samplerOf({ ...base, sampler, samplerRatio: 0.5 }).toString()).toContain(described);
  });
});

describe('createTracing', () => {
  it('is off, starting nothing, while no endpoint is set', () => {
    const tracing = createTracing(base, '0.0.0');
    expect(tracing).toBe(Tracing.off);
    expect(tracing.startInbound()).toBeNull();
    expect(
      tracing.startAttempt({ id: 'd', webhookId: 'w', event: 'e', url: 'http://x' }, 1),
    ).toBeNull();
  });

  it('continues a stored traceparent, and starts a new trace without one', () => {
    const tracing = createTracing(
      { ...base, endpoint: 'http://127.0.0.1:9', sampler: 'always_on' },
      '0.0.0',
    );
    const root = tracing.startInbound()!;
    const stored = traceparentOf(root)!;
    expect(stored).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const delivery = {
      id: 'd',
      webhookId: 'w',
      event: 'job.started',
      url: 'https://u:p@h.example/x?token=1',
    };
    const attempt = tracing.startAttempt({ ...delivery, traceContext: stored }, 1)!;
    expect(attempt.spanContext().traceId).toBe(root.spanContext().traceId);
    const fresh = tracing.startAttempt({ ...delivery, traceContext: null }, 1)!;
    expect(fresh.spanContext().traceId).not.toBe(root.spanContext().traceId);
    // A garbled stored value is ignored rather than failing the attempt.
    expect(contextOf('00-not-a-trace')).toBeDefined();
  });
});
