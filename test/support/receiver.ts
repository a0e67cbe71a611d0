import { IncomingHttpHeaders, Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPES } from '../../src/webhooks/event-catalog';
import { catalogChecker } from './event-schemas';

// The catalog GET /api/event-types serves; compiled once for every receiver of a test file.
let checkBody: ((body: Buffer | string) => string[]) | undefined;

/**
 * What a delivered body breaks of its kind's schema. Only bodies the service built from real
 * input are held to it: those of a platform event (`source` set), test deliveries and the
 * operational events (`bridge.*`); a test
 * that calls publish() directly with made-up `data` (no source) tests delivery, not content.
 */
function schemaProblems(headers: IncomingHttpHeaders, body: Buffer): string[] {
  if (headers['x-service-event'] === undefined) return [];
  let parsed: { event?: unknown; source?: unknown };
  try {
    parsed = JSON.parse(body.toString()) as typeof parsed;
  } catch {
    return ['the body is not JSON'];
  }
  const ownEvent = parsed.event === 'webhook.test' || String(parsed.event).startsWith('bridge.');
  if (parsed.source == null && !ownEvent) return [];
  checkBody ??= catalogChecker(EVENT_TYPES.map(({ name, schema }) => ({ name, schema })));
  return checkBody(body);
}

/** One request as it reached the receiver: the raw body bytes, untouched. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
  /** The client's port: requests on one kept-alive connection share it. */
  remotePort: number | undefined;
  /** When its answer went out (undefined until then, or when the client had gone). */
  answeredAt?: number;
  /** The status it was answered with. */
  status?: number;
}

export interface RouteBehaviour {
  /** Status per request in turn; the last one repeats. Default 200. */
  statuses?: number[];
  /** Delay before answering, per request in turn; the last one repeats. Default 0. */
  delaysMs?: number[];
  /** Answer body. Default "ok". */
  body?: string | Buffer;
  /** Extra answer headers (e.g. location). */
  headers?: Record<string, string>;
  /**
   * Per request in turn (the last one repeats): send the status line and headers at once, then
   * the body a byte at a time spread over this many ms. Default 0: the whole body at once.
   */
  trickleMs?: number[];
  /**
   * Decides the answer of each request from the request itself (`index`: its place among this
   * path's requests), over `statuses` and `headers`.
   */
  /**
   * Its webhook has a template (docs/templates.md): what arrives is the template's output, not a
   * notification body, and is not held against the kind's schema.
   */
  shaped?: boolean;
  respond?: (
    request: ReceivedRequest,
    index: number,
  ) => { status: number; headers?: Record<string, string> };
}

/**
 * A local subscriber endpoint for the tests (node:http, no mocks): each path behaves as told,
 * every request is recorded with its raw body and headers, and a path can be held so that a
 * request stays in flight until the test releases it.
 */
export class Receiver {
  private readonly server: Server;
  private readonly routes = new Map<string, RouteBehaviour>();
  private readonly held = new Map<string, { request: ReceivedRequest; answer: () => void }[]>();
  private readonly holding = new Set<string>();
  readonly received: ReceivedRequest[] = [];
  /** Every way a delivered body broke its kind's schema; close() fails the file when any did. */
  readonly schemaViolations: string[] = [];
  private readonly byPath = new Map<string, ReceivedRequest[]>();
  private baseUrl = '';
  /** TCP connections accepted so far. */
  connections = 0;

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const record: ReceivedRequest = {
          path,
          headers: req.headers,
          body: Buffer.concat(chunks),
          receivedAt: Date.now(),
          remotePort: req.socket.remotePort,
        };
        const forPath = this.byPath.get(path) ?? [];
        const index = forPath.length;
        forPath.push(record);
        this.byPath.set(path, forPath);
        this.received.push(record);
        const route = this.routes.get(path) ?? {};
        const problems = route.shaped ? [] : schemaProblems(req.headers, record.body);
        for (const problem of problems) this.schemaViolations.push(`${path}: ${problem}`);
        const pick = (list: number[] | undefined, fallback: number) =>
          list && list.length > 0 ? list[Math.min(index, list.length - 1)] : fallback;
        const answer = () => {
          if (res.destroyed) return;
          const decided = route.respond?.(record, index);
          record.status = decided?.status ?? pick(route.statuses, 200);
          record.answeredAt = Date.now();
          res.writeHead(record.status, {
            'content-type': 'text/plain',
            ...route.headers,
            ...decided?.headers,
          });
          const body = Buffer.from(route.body ?? 'ok');
          const trickleMs = pick(route.trickleMs, 0);
          if (trickleMs <= 0 || body.length === 0) {
            res.end(body);
            return;
          }
          res.flushHeaders();
          let sent = 0;
          const timer = setInterval(
            () => {
              if (res.destroyed) return;
              sent++;
              if (sent < body.length) res.write(body.subarray(sent - 1, sent));
              else res.end(body.subarray(sent - 1));
            },
            Math.max(1, Math.floor(trickleMs / body.length)),
          );
          res.on('close', () => clearInterval(timer));
        };
        const delayed = () => {
          const delay = pick(route.delaysMs, 0);
          if (delay > 0) setTimeout(answer, delay);
          else answer();
        };
        if (this.holding.has(path)) {
          this.held.set(path, [
            ...(this.held.get(path) ?? []),
            { request: record, answer: delayed },
          ]);
        } else {
          delayed();
        }
      });
    });
    this.server.on('connection', () => this.connections++);
    this.server.keepAliveTimeout = 30_000;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return this;
  }

  /** A fresh URL on this receiver, behaving as told. */
  route(behaviour: RouteBehaviour = {}, name = 'hook'): { url: string; path: string } {
    const path = `/${name}/${Math.random().toString(36).slice(2, 10)}`;
    this.routes.set(path, behaviour);
    return { url: `${this.baseUrl}${path}`, path };
  }

  requests(path: string): ReceivedRequest[] {
    return [...(this.byPath.get(path) ?? [])];
  }

  /** Requests to `path` wait, once recorded, until release(path). */
  hold(path: string): void {
    this.holding.add(path);
  }

  release(path: string): void {
    this.holding.delete(path);
    for (const { answer } of this.held.get(path) ?? []) answer();
    this.held.delete(path);
  }

  /** Requests received and held, not answered yet: in flight for their sender. */
  heldRequests(): ReceivedRequest[] {
    return [...this.held.values()].flat().map((h) => h.request);
  }

  async close(): Promise<void> {
    for (const path of [...this.holding]) this.release(path);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.schemaViolations.length > 0) {
      throw new Error(
        `delivered bodies that break their kind's schema (GET /api/event-types):\n` +
          this.schemaViolations.join('\n'),
      );
    }
  }
}

export async function startReceiver(): Promise<Receiver> {
  return new Receiver().start();
}
