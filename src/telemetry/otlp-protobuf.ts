import type {
  AttributeValue,
  Attributes,
  HrTime,
  Link,
  SpanContext,
  SpanStatus,
} from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type {
  IExportTraceServiceResponse,
  IExporterMetricsHelper,
  ISerializer,
} from '@opentelemetry/otlp-transformer';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-node';

/** Protobuf wire types. */
const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

/** W3C trace flags as OTLP's Span.flags carries them (the context is known to be local or remote). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** int64 bounds for int_value (else double_value), as the exporter package decides. */
const MIN_INT64 = -(2 ** 63);
const MAX_INT64 = 2 ** 63;

/** A span's message usually needs two bytes for its length. */
const SPAN_LENGTH_BYTES = 2;
/** A batch of spans: up to three bytes of length before its contents have to move. */
const BATCH_LENGTH_BYTES = 3;
/** A first guess of a span's encoded size, so that a batch's buffer seldom grows. */
const SPAN_BYTES_GUESS = 384;

function varintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  return 5;
}

/** Writes an unsigned 32-bit varint at `pos` (room already made); returns the position after it. */
function putVarint(buf: Buffer, pos: number, value: number): number {
  let v = value >>> 0;
  while (v > 0x7f) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[pos++] = v;
  return pos;
}

/** Each ASCII character's value as a hex digit, as the exporter package's hexToBinary reads ids. */
const HEX = new Uint8Array(256).map((_, code) => {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return code - 55;
});

/**
 * One pass into one growing buffer. A length-delimited message reserves the bytes its length
 * usually takes and moves its contents only when the length needs another count.
 */
class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }

  room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** An unsigned varint; negative and 64-bit numbers as int64 (two's complement, ten bytes). */
  varint(value: number): void {
    this.room(10);
    const buf = this.buf;
    let pos = this.pos;
    if (value >= 0 && value <= 0xffffffff) {
      pos = putVarint(buf, pos, value);
    } else {
      const abs = Math.abs(value);
      let low = abs >>> 0;
      let high = (abs / 0x100000000) >>> 0;
      if (value < 0) {
        low = ~low >>> 0;
        high = ~high >>> 0;
        low = (low + 1) >>> 0;
        if (low === 0) high = (high + 1) >>> 0;
      }
      while (high > 0 || low > 0x7f) {
        buf[pos++] = (low & 0x7f) | 0x80;
        low = ((low >>> 7) | (high << 25)) >>> 0;
        high >>>= 7;
      }
      buf[pos++] = low & 0x7f;
    }
    this.pos = pos;
  }

  fixed32(value: number): void {
    this.room(4);
    this.buf.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** Time in nanoseconds as fixed64, without losing precision to doubles or allocating. */
  time([seconds, nanos]: HrTime): void {
    const lowSeconds = (seconds & 0xffff) * 1e9;
    const highSeconds = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (lowSeconds >>> 0) + (((highSeconds & 0xffff) * 0x10000) >>> 0) + nanos;
    const high =
      (Math.floor(lowSeconds / 0x100000000) +
        ((highSeconds / 0x10000) >>> 0) +
        Math.floor(low / 0x100000000)) >>>
      0;
    this.room(8);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.room(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A string's UTF-8 bytes with their length: ASCII copied here, anything else by Buffer. */
  string(s: string): void {
    const n = s.length;
    this.room(n * 3 + 10);
    const buf = this.buf;
    const at = this.pos;
    let pos = at + varintSize(n);
    for (let i = 0; i < n; i++) {
      const code = s.charCodeAt(i);
      if (code > 0x7f) {
        const bytes = Buffer.byteLength(s, 'utf8');
        this.pos = putVarint(buf, at, bytes);
        this.pos += buf.write(s, this.pos, bytes, 'utf8');
        return;
      }
      buf[pos++] = code;
    }
    putVarint(buf, at, n);
    this.pos = pos;
  }

  /** A trace or span id (hex) as its bytes. */
  id(hex: string): void {
    const n = hex.length >> 1;
    this.varint(n);
    this.room(n);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < n; i++) {
      buf[pos++] = (HEX[hex.charCodeAt(2 * i) & 0xff] << 4) | HEX[hex.charCodeAt(2 * i + 1) & 0xff];
    }
    this.pos = pos;
  }

  /** Bytes already encoded. */
  bytesAsIs(value: Uint8Array): void {
    this.room(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.bytesAsIs(value);
  }

  /** Starts a length-delimited message whose length is expected to take `reserve` bytes. */
  begin(reserve = 1): number {
    this.room(reserve);
    const at = this.pos;
    this.pos += reserve;
    return at;
  }

  end(at: number, reserve = 1): void {
    const length = this.pos - at - reserve;
    const size = varintSize(length);
    if (size !== reserve) {
      this.room(size - reserve);
      this.buf.copyWithin(at + size, at + reserve, this.pos);
      this.pos += size - reserve;
    }
    putVarint(this.buf, at, length);
  }

  /** The bytes written; `buf` is not written again. */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

function writeAnyValue(w: Writer, value: unknown): void {
  switch (typeof value) {
    case 'string':
      w.tag(1, BYTES);
      w.string(value);
      return;
    case 'boolean':
      w.tag(2, VARINT);
      w.varint(value ? 1 : 0);
      return;
    case 'number':
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        w.tag(3, VARINT);
        w.varint(value);
      } else {
        w.tag(4, FIXED64);
        w.double(value);
      }
      return;
  }
  if (value instanceof Uint8Array) {
    w.tag(7, BYTES);
    w.bytes(value);
  } else if (Array.isArray(value)) {
    w.tag(5, BYTES);
    const array = w.begin();
    for (const item of value) {
      w.tag(1, BYTES);
      const at = w.begin();
      writeAnyValue(w, item);
      w.end(at);
    }
    w.end(array);
  } else if (typeof value === 'object' && value !== null) {
    w.tag(6, BYTES);
    const list = w.begin();
    writeKeyValues(w, value as Record<string, unknown>, 1);
    w.end(list);
  }
}

/** Repeated KeyValue in field `field`. */
function writeKeyValues(w: Writer, values: Record<string, unknown>, field: number): void {
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    w.tag(field, BYTES);
    const kv = w.begin();
    w.tag(1, BYTES);
    w.string(key);
    w.tag(2, BYTES);
    const value = w.begin();
    writeAnyValue(w, values[key] as AttributeValue);
    w.end(value);
    w.end(kv);
  }
}

function flagsOf(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

function writeStatus(w: Writer, status: SpanStatus): void {
  const at = w.begin();
  if (status.message) {
    w.tag(2, BYTES);
    w.string(status.message);
  }
  w.tag(3, VARINT);
  w.varint(status.code);
  w.end(at);
}

function writeEvent(w: Writer, event: TimedEvent): void {
  const at = w.begin(2);
  w.tag(1, FIXED64);
  w.time(event.time);
  w.tag(2, BYTES);
  w.string(event.name);
  if (event.attributes) writeKeyValues(w, event.attributes, 3);
  w.tag(4, VARINT);
  w.varint(event.droppedAttributesCount || 0);
  w.end(at, 2);
}

/** trace_id, span_id and trace_state: fields 1 to 3 of a span and of a link alike. */
function writeIdentity(w: Writer, context: SpanContext): void {
  w.tag(1, BYTES);
  w.id(context.traceId);
  w.tag(2, BYTES);
  w.id(context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) {
    w.tag(3, BYTES);
    w.string(traceState);
  }
}

function writeLink(w: Writer, link: Link): void {
  const at = w.begin(2);
  const context = link.context;
  writeIdentity(w, context);
  if (link.attributes) writeKeyValues(w, link.attributes, 4);
  w.tag(5, VARINT);
  w.varint(link.droppedAttributesCount || 0);
  w.tag(6, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, context.isRemote));
  w.end(at, 2);
}

function writeSpan(w: Writer, span: ReadableSpan): void {
  const at = w.begin(SPAN_LENGTH_BYTES);
  const context = span.spanContext();
  writeIdentity(w, context);
  const parent = span.parentSpanContext;
  if (parent?.spanId) {
    w.tag(4, BYTES);
    w.id(parent.spanId);
  }
  w.tag(5, BYTES);
  w.string(span.name);
  // OTLP's kinds count from 1 (0 is unspecified).
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    w.tag(6, VARINT);
    w.varint(kind);
  }
  w.tag(7, FIXED64);
  w.time(span.startTime);
  w.tag(8, FIXED64);
  w.time(span.endTime);
  if (span.attributes) writeKeyValues(w, span.attributes, 9);
  w.tag(10, VARINT);
  w.varint(span.droppedAttributesCount);
  for (const event of span.events) {
    w.tag(11, BYTES);
    writeEvent(w, event);
  }
  w.tag(12, VARINT);
  w.varint(span.droppedEventsCount);
  for (const link of span.links) {
    w.tag(13, BYTES);
    writeLink(w, link);
  }
  w.tag(14, VARINT);
  w.varint(span.droppedLinksCount);
  w.tag(15, BYTES);
  writeStatus(w, span.status);
  w.tag(16, FIXED32);
  w.fixed32(flagsOf(context.traceFlags, parent?.isRemote));
  w.end(at, SPAN_LENGTH_BYTES);
}

function writeScope(w: Writer, scope: InstrumentationScope & Partial<ScopeExtras>): void {
  w.tag(1, BYTES);
  const at = w.begin();
  w.tag(1, BYTES);
  w.string(scope.name);
  if (scope.version) {
    w.tag(2, BYTES);
    w.string(scope.version);
  }
  if (scope.attributes) writeKeyValues(w, scope.attributes, 3);
  if (scope.droppedAttributesCount) {
    w.tag(4, VARINT);
    w.varint(scope.droppedAttributesCount);
  }
  w.end(at);
}

/** What an instrumentation scope may carry beyond the core type's fields. */
interface ScopeExtras {
  attributes: Attributes;
  droppedAttributesCount: number;
}

function writeResource(w: Writer, resource: Resource): void {
  w.tag(1, BYTES);
  const at = w.begin();
  if (resource.attributes) writeKeyValues(w, resource.attributes, 1);
  w.tag(2, VARINT);
  w.varint(0);
  w.end(at);
}

/**
 * Spans of one resource and instrumentation scope, written in OTLP protobuf as each ends, so
 * that what waits to be exported is bytes rather than span objects (the span is garbage as
 * soon as it has ended). `request()` is the ExportTraceServiceRequest carrying them, byte for
 * byte what the exporter package's ProtobufTraceSerializer writes for the same spans
 * (src/telemetry/otlp-protobuf.spec.ts compares them); the spans are written in one pass, where
 * that serializer takes two per export (a size estimate, then the bytes) and allocates per id.
 */
export class SpanBatch {
  /** ScopeSpans.spans fields, one per span. */
  private readonly spans: Writer;
  count = 0;

  constructor(
    readonly resource: Resource,
    readonly scope: InstrumentationScope,
    expectedSpans: number,
  ) {
    this.spans = new Writer(expectedSpans * SPAN_BYTES_GUESS);
  }

  add(span: ReadableSpan): void {
    this.spans.tag(2, BYTES);
    writeSpan(this.spans, span);
    this.count += 1;
  }

  request(): Uint8Array {
    const spans = this.spans.finish();
    const w = new Writer(spans.length + 1024);
    w.tag(1, BYTES);
    const resourceSpans = w.begin(BATCH_LENGTH_BYTES);
    writeResource(w, this.resource);
    w.tag(2, BYTES);
    const scopeSpans = w.begin(BATCH_LENGTH_BYTES);
    writeScope(w, this.scope);
    w.bytesAsIs(spans);
    if (this.scope.schemaUrl) {
      w.tag(3, BYTES);
      w.string(this.scope.schemaUrl);
    }
    w.end(scopeSpans, BATCH_LENGTH_BYTES);
    if (this.resource.schemaUrl) {
      w.tag(3, BYTES);
      w.string(this.resource.schemaUrl);
    }
    w.end(resourceSpans, BATCH_LENGTH_BYTES);
    return w.finish();
  }
}

/** The http/protobuf serializer of span batches; answers are read by the exporter package's. */
export const SpanBatchSerializer: ISerializer<SpanBatch, IExportTraceServiceResponse> = {
  serializeRequest: (batch) => batch.request(),
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/** Counts a batch's spans for the exporter's self-observability metrics. */
export const SpanBatchMetricsHelper: IExporterMetricsHelper<SpanBatch> = {
  name: 'span',
  countItems: (batch) => batch.count,
};
