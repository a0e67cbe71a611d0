import { hrTimeToMicroseconds } from '@opentelemetry/core';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { performance } from 'node:perf_hooks';
import { Tracing } from './tracing';

describe('Tracing.ingestSpans', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = new Tracing(provider.getTracer('test'));
  const micros = (span: ReadableSpan, at: 'startTime' | 'endTime') =>
    hrTimeToMicroseconds(span[at]);

  afterEach(() => exporter.reset());
  afterAll(() => provider.shutdown());

  it('records bridge.map from when the mapping began, then opens bridge.publish under the same parent', () => {
    const parent = tracing.startInbound()!;
    // The mapping began 5 ms ago: the span covers it, though it is started after.
    const mappingFrom = performance.now() - 5;
    const publishing = tracing.ingestSpans(parent, 'meeting.started', mappingFrom, {
      kind: 'job.started',
      id: 'e1',
    })!;
    publishing.end();

    const [mapping, publish] = exporter.getFinishedSpans();
    expect(mapping.name).toBe('bridge.map');
    expect(mapping.attributes).toEqual({
      'zoom.event': 'meeting.started',
      'bridge.event': 'job.started',
    });
    expect(publish.name).toBe('bridge.publish');
    expect(publish.attributes).toEqual({ 'bridge.event': 'job.started', 'bridge.event_id': 'e1' });
    for (const span of [mapping, publish]) {
      expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    }
    expect(micros(mapping, 'endTime') - micros(mapping, 'startTime')).toBeGreaterThan(4990);
    expect(micros(publish, 'startTime')).toBeGreaterThanOrEqual(micros(mapping, 'startTime'));
  });

  it('records bridge.map alone for an event not published with its row', () => {
    const parent = tracing.startInbound()!;
    expect(tracing.ingestSpans(parent, 'recording.completed', performance.now(), null)).toBeNull();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => [s.name, s.attributes])).toEqual([
      ['bridge.map', { 'zoom.event': 'recording.completed' }],
    ]);
  });

  it('starts nothing without a parent or while off', () => {
    expect(tracing.ingestSpans(null, 'meeting.started', performance.now(), null)).toBeNull();
    expect(Tracing.off.ingestSpans(null, 'meeting.started', performance.now(), null)).toBeNull();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
