import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ExportResult, ExportResultCode, TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  NodeTracerProvider,
  ReadableSpan,
  SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { waitFor } from '../../test/support/wait-for';
import { SpanBatch } from './otlp-protobuf';
import {
  BatchSettings,
  SerializingBatchSpanProcessor,
  SpanBatchExporter,
} from './serializing-batch-span-processor';

/** Keeps what the processor hands over, as the OTLP exporter would receive it. */
class KeptBatches implements SpanBatchExporter {
  readonly batches: SpanBatch[] = [];
  result: ExportResult = { code: ExportResultCode.SUCCESS };

  export(batch: SpanBatch, done: (result: ExportResult) => void): void {
    this.batches.push(batch);
    done(this.result);
  }
  forceFlush = () => Promise.resolve();
  shutdown = () => Promise.resolve();
}

/** A provider whose spans go to the serializing processor and, as they are, to `ended`. */
function providerWith(exporter: KeptBatches, settings: BatchSettings) {
  const ended: ReadableSpan[] = [];
  const keep: SpanProcessor = {
    onStart: () => undefined,
    onEnd: (span) => void ended.push(span),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bridge', 'service.version': '1.2.3' }),
    spanProcessors: [new SerializingBatchSpanProcessor(exporter, settings), keep],
  });
  return { provider, ended };
}

const ONE_BATCH: BatchSettings = { maxExportBatchSize: 1000, scheduledDelayMillis: 60_000 };

/** What the exporter package's own serializer writes for these spans. */
const sdkBytes = (spans: ReadableSpan[]) =>
  Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!);

describe('SpanBatch (OTLP protobuf, span by span)', () => {
  it('writes the bytes the exporter package writes, for every kind of span content', async () => {
    const exporter = new KeptBatches();
    const { provider, ended } = providerWith(exporter, ONE_BATCH);
    const tracer = provider.getTracer('meeting-event-bridge', '1.2.3');

    const root = tracer.startSpan(
      'POST /zoom/events',
      {
        kind: SpanKind.SERVER,
        attributes: {
          text: 'accepted',
          empty: '',
          unicode: 'réunion ☃ 😀',
          status: 200,
          negative: -5,
          large: 2 ** 40,
          huge: 2 ** 62,
          fraction: 1.5,
          nan: NaN,
          flag: true,
          names: ['a', 'ü'],
          numbers: [1, 2.5, -3],
        },
      },
      ROOT_CONTEXT,
    );
    // Long enough that lengths take three bytes and messages move in the buffer.
    root.setAttribute('long', 'x'.repeat(20_000));
    root.addEvent('retry', { attempt: 2 });
    root.recordException(new Error('refused ✗'));
    root.setStatus({ code: SpanStatusCode.ERROR, message: 'boom' });
    root.end();

    const child = tracer.startSpan(
      'bridge.map',
      { links: [{ context: root.spanContext(), attributes: { why: 'follows' } }] },
      trace.setSpan(ROOT_CONTEXT, root),
    );
    child.end();

    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState('vendor=1,other=2'),
    });
    const client = tracer.startSpan('POST', { kind: SpanKind.CLIENT }, remote);
    for (let i = 0; i < 200; i++) client.setAttribute(`key.${i}`, i);
    client.end();
    tracer.startSpan('n'.repeat(300), { kind: SpanKind.CONSUMER }).end();

    await provider.forceFlush();
    expect(exporter.batches).toHaveLength(1);
    expect(exporter.batches[0].count).toBe(4);
    expect(Buffer.from(exporter.batches[0].request())).toEqual(sdkBytes(ended));
  });

  it('keeps a batch per instrumentation scope, each the bytes of its own spans', async () => {
    const exporter = new KeptBatches();
    const { provider, ended } = providerWith(exporter, ONE_BATCH);
    provider.getTracer('one', '1').startSpan('a').end();
    provider.getTracer('two').startSpan('b').end();
    provider.getTracer('one', '1').startSpan('c').end();
    await provider.forceFlush();

    expect(exporter.batches.map((b) => [b.scope.name, b.count])).toEqual([
      ['one', 2],
      ['two', 1],
    ]);
    const [one, two] = exporter.batches;
    expect(Buffer.from(one.request())).toEqual(sdkBytes([ended[0], ended[2]]));
    expect(Buffer.from(two.request())).toEqual(sdkBytes([ended[1]]));
  });
});

describe('SerializingBatchSpanProcessor', () => {
  it('sends a batch once it is full, and the rest when flushed', async () => {
    const exporter = new KeptBatches();
    const { provider } = providerWith(exporter, {
      maxExportBatchSize: 3,
      scheduledDelayMillis: 60_000,
    });
    const tracer = provider.getTracer('t');
    for (let i = 0; i < 7; i++) tracer.startSpan(`s${i}`).end();
    expect(exporter.batches.map((b) => b.count)).toEqual([3, 3]);
    await provider.forceFlush();
    expect(exporter.batches.map((b) => b.count)).toEqual([3, 3, 1]);
  });

  it('sends a batch that is not full after the delay', async () => {
    const exporter = new KeptBatches();
    const { provider } = providerWith(exporter, {
      maxExportBatchSize: 100,
      scheduledDelayMillis: 1,
    });
    provider.getTracer('t').startSpan('alone').end();
    expect(exporter.batches).toHaveLength(0);
    await waitFor(() => exporter.batches.length === 1, { what: 'the delayed batch' });
    expect(exporter.batches[0].count).toBe(1);
  });

  it('keeps no span that is not sampled, and nothing after shutdown', async () => {
    const exporter = new KeptBatches();
    const processor = new SerializingBatchSpanProcessor(exporter, ONE_BATCH);
    const unsampled = new NodeTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [processor],
    });
    unsampled.getTracer('t').startSpan('dropped').end();
    await processor.forceFlush();
    expect(exporter.batches).toHaveLength(0);

    const { provider } = providerWith(exporter, ONE_BATCH);
    await provider.shutdown();
    provider.getTracer('t').startSpan('late').end();
    await provider.forceFlush();
    expect(exporter.batches).toHaveLength(0);
  });
});
