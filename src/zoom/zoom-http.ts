import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { Agent, Dispatcher, request } from 'undici';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { Tracing } from '../telemetry/tracing';
import { ZoomApiError } from './zoom-error';
import { ZOOM_TRACKING_HEADER } from './webhook-signature';

export interface ZoomHttpRequest {
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Aborts the exchange (headers and body) when it fires; streamed downloads pass none. */
  signal?: AbortSignal;
}

export type ZoomHttpResponse = Dispatcher.ResponseData;

/** Largest upstream body read into memory (JSON answers); recordings are streamed instead. */
export const MAX_JSON_BYTES = 16 * 1024 * 1024;

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * The one HTTP agent for platform calls: keep-alive connections, and every phase bounded by
 * ZOOM_TIMEOUT_MS (connect, time to headers, and each gap between body chunks), so a platform
 * that stops answering costs at most that long. Transport failures become 502/504.
 */
@Injectable()
export class ZoomHttp implements OnApplicationShutdown {
  private readonly logger = new Logger(ZoomHttp.name);
  private readonly agent: Agent;
  readonly timeoutMs: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {
    this.timeoutMs = config.zoom.timeoutMs;
    this.agent = new Agent({
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: this.timeoutMs },
    });
  }

  /** A signal for one whole JSON exchange. */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.timeoutMs);
  }

  /** One exchange; a client span of its own (docs/operations.md) while tracing is on, to the headers. */
  async send(url: string, req: ZoomHttpRequest): Promise<ZoomHttpResponse> {
    const span = this.tracing.startClient(req.method, url);
    try {
      const res = await request(url, {
        dispatcher: this.agent,
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: req.signal,
      });
      const tracking = res.headers[ZOOM_TRACKING_HEADER];
      this.tracing.endClient(span, res.statusCode, typeof tracking === 'string' ? tracking : null);
      return res;
    } catch (error) {
      this.tracing.endClient(span, null, null, error);
      throw this.transportError(error, `${req.method} ${new URL(url).origin}`);
    }
  }

  /** Reads a whole (small) body; over `limit` bytes is a bad answer, not a memory problem. */
  async readBody(res: ZoomHttpResponse, limit = MAX_JSON_BYTES): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limit) {
          res.body.destroy();
          throw ZoomApiError.badResponse(`The meeting platform sent more than ${limit} bytes`);
        }
        chunks.push(chunk);
      }
    } catch (error) {
      throw this.transportError(error, 'reading the answer of');
    }
    return Buffer.concat(chunks);
  }

  /** The body as JSON; undefined when empty. Non-JSON is undefined too when `lenient`. */
  async readJson(res: ZoomHttpResponse, lenient = false): Promise<unknown> {
    const raw = await this.readBody(res);
    if (raw.length === 0) return undefined;
    try {
      return JSON.parse(raw.toString('utf8')) as unknown;
    } catch {
      if (lenient) return undefined;
      throw ZoomApiError.badResponse('The meeting platform sent a response that is not JSON');
    }
  }

  /** Drops a body we do not need, so its connection can be reused. */
  async discard(res: ZoomHttpResponse): Promise<void> {
    await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }

  /** `what` names the exchange for the log: method and origin, never a path or a token. */
  private transportError(error: unknown, what: string): ZoomApiError {
    if (error instanceof ZoomApiError) return error;
    const { name, code } = (error ?? {}) as { name?: string; code?: string };
    if (name === 'TimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
      this.logger.warn(`${what}: timed out after ${this.timeoutMs} ms`);
      return ZoomApiError.timeout(this.timeoutMs);
    }
    const reason = code ?? name ?? 'network error';
    this.logger.warn(`${what}: ${reason}`);
    return ZoomApiError.unreachable(reason);
  }
}
