import type { OtlpAttribute, OtlpRequest, OtlpValue } from './otlp-collector';

/** One field of a protobuf message: a varint or fixed number, or length-delimited bytes. */
interface Field {
  field: number;
  varint?: bigint;
  fixed64?: Buffer;
  bytes?: Buffer;
}

/** The fields of one message, in order (wire types 0, 1, 2 and 5: all OTLP uses). */
function fieldsOf(buf: Buffer): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const byte = buf[pos++];
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    switch (tag & 7) {
      case 0:
        fields.push({ field, varint: varint() });
        break;
      case 1:
        fields.push({ field, fixed64: buf.subarray(pos, (pos += 8)) });
        break;
      case 2: {
        const length = Number(varint());
        if (pos + length > buf.length) throw new Error('truncated message');
        fields.push({ field, bytes: buf.subarray(pos, (pos += length)) });
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`wire type ${tag & 7} is not OTLP's`);
    }
  }
  return fields;
}

const all = (fields: Field[], field: number) => fields.filter((f) => f.field === field);
const one = (fields: Field[], field: number) => fields.find((f) => f.field === field);
const text = (f: Field | undefined) => f?.bytes?.toString('utf8');
const hex = (f: Field | undefined) => f?.bytes?.toString('hex') ?? '';

function valueOf(buf: Buffer): OtlpValue {
  const [f] = fieldsOf(buf);
  switch (f?.field) {
    case 1:
      return { stringValue: text(f) };
    case 2:
      return { boolValue: f.varint !== 0n };
    case 3:
      return { intValue: Number(BigInt.asIntN(64, f.varint!)) };
    case 4:
      return { doubleValue: f.fixed64!.readDoubleLE(0) };
    default:
      return {};
  }
}

const attributesOf = (fields: Field[], field: number): OtlpAttribute[] =>
  all(fields, field).map(({ bytes }) => {
    const kv = fieldsOf(bytes!);
    return { key: text(one(kv, 1)) ?? '', value: valueOf(one(kv, 2)?.bytes ?? Buffer.alloc(0)) };
  });

/**
 * An OTLP/HTTP protobuf ExportTraceServiceRequest in the JSON protocol's shape (ids as hex),
 * with what the collector keeps: resource attributes, and each span's ids, name, kind,
 * attributes and status.
 */
export function decodeTraceRequest(body: Buffer): OtlpRequest {
  return {
    resourceSpans: all(fieldsOf(body), 1).map(({ bytes }) => {
      const resourceSpans = fieldsOf(bytes!);
      const resource = one(resourceSpans, 1)?.bytes;
      return {
        resource: { attributes: resource ? attributesOf(fieldsOf(resource), 1) : [] },
        scopeSpans: all(resourceSpans, 2).map((scope) => ({
          spans: all(fieldsOf(scope.bytes!), 2).map((s) => {
            const span = fieldsOf(s.bytes!);
            const status = fieldsOf(one(span, 15)?.bytes ?? Buffer.alloc(0));
            return {
              traceId: hex(one(span, 1)),
              spanId: hex(one(span, 2)),
              parentSpanId: hex(one(span, 4)),
              name: text(one(span, 5)) ?? '',
              kind: Number(one(span, 6)?.varint ?? 0n),
              attributes: attributesOf(span, 9),
              status: { code: Number(one(status, 3)?.varint ?? 0n), message: text(one(status, 2)) },
            };
          }),
        })),
      };
    }),
  };
}
