import { TraceFlags } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import { ExportResult, ExportResultCode, globalErrorHandler } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { SpanBatch } from './otlp-protobuf';

/** What sends a batch (the OTLP/HTTP exporter over SpanBatchSerializer). */
export interface SpanBatchExporter {
  export(batch: SpanBatch, done: (result: ExportResult) => void): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

export interface BatchSettings {
  /** A batch is sent once it holds this many spans... */
  maxExportBatchSize: number;
  /** ...or this long after its first span ended. */
  scheduledDelayMillis: number;
}

/**
 * The SDK's BatchSpanProcessor, except that a span is serialised as it ends (SpanBatch) rather
 * than kept until its batch is sent: under load the kept spans outlived the young generation
 * and made the collector copy and promote them. Batches are sent as the SDK's are (by size, or
 * after a delay); the exporter bounds how many are in flight, and a batch it refuses or fails
 * to send is reported to the global error handler and dropped, as the SDK's processor does.
 */
export class SerializingBatchSpanProcessor implements SpanProcessor {
  /** The batch being filled, per resource and scope (one, unless a second tracer is used). */
  private readonly open: SpanBatch[] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly exporter: SpanBatchExporter,
    private readonly settings: BatchSettings,
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    const batch = this.batchOf(span.resource, span.instrumentationScope);
    batch.add(span);
    if (batch.count >= this.settings.maxExportBatchSize) {
      this.open.splice(this.open.indexOf(batch), 1);
      this.send(batch);
    } else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.sendOpen(), this.settings.scheduledDelayMillis);
      this.timer.unref();
    }
  }

  /** Sends every open batch and waits for all in flight. */
  forceFlush(): Promise<void> {
    this.sendOpen();
    return this.exporter.forceFlush();
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sendOpen();
    await this.exporter.shutdown();
  }

  private batchOf(resource: Resource, scope: InstrumentationScope): SpanBatch {
    for (const batch of this.open) {
      if (batch.resource === resource && batch.scope === scope) return batch;
    }
    const batch = new SpanBatch(resource, scope, this.settings.maxExportBatchSize);
    this.open.push(batch);
    return batch;
  }

  private sendOpen(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const batch of this.open.splice(0)) this.send(batch);
  }

  private send(batch: SpanBatch): void {
    this.exporter.export(batch, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        globalErrorHandler(result.error ?? new Error('span export failed'));
      }
    });
  }
}
