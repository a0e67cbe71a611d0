import { Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './otlp-protobuf-reader';

/** One span as the collector received it, its attributes flattened to plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  serviceName: string | undefined;
}

export interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
export interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
export interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: OtlpAttribute[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

const flatten = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map((a) => [a.key, valueOf(a.value)]));

/**
 * A local OTLP/HTTP trace collector for the tests (node:http, both protocols: http/protobuf and
 * http/json): it answers every POST /v1/traces with 200 and keeps each span it was sent.
 */
export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Every request it got, decoded or not. */
  requests = 0;
  private readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.requests += 1;
        const type = String(req.headers['content-type']);
        const body = Buffer.concat(chunks);
        if (req.method === 'POST' && req.url === '/v1/traces') {
          if (type.startsWith('application/json')) {
            this.keep(JSON.parse(body.toString('utf8')) as OtlpRequest);
          } else if (type.startsWith('application/x-protobuf')) {
            this.keep(decodeTraceRequest(body));
          }
        }
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The spans of one trace. */
  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** The spans whose attribute `key` equals `value`. */
  withAttribute(key: string, value: string | number | boolean): CollectedSpan[] {
    return this.spans.filter((s) => s.attributes[key] === value);
  }

  private keep(body: OtlpRequest): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = flatten(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ? span.parentSpanId : null,
            name: span.name,
            kind: span.kind,
            attributes: flatten(span.attributes),
            status: { code: span.status?.code ?? 0, message: span.status?.message },
            serviceName: resource['service.name'] as string | undefined,
          });
        }
      }
    }
  }
}

export const startCollector = (): Promise<OtlpCollector> => new OtlpCollector().listen();
