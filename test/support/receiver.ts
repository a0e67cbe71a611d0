import { IncomingHttpHeaders, Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as it reached the receiver: the raw body bytes, untouched. */
export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
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
}

/**
 * A local subscriber endpoint for the tests (node:http, no mocks): each path behaves as told,
 * every request is recorded with its raw body and headers, and a path can be held so that a
 * request stays in flight until the test releases it.
 */
export class Receiver {
  private readonly server: Server;
  private readonly routes = new Map<string, RouteBehaviour>();
  private readonly held = new Map<string, (() => void)[]>();
  private readonly holding = new Set<string>();
  readonly received: ReceivedRequest[] = [];
  private baseUrl = '';

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const index = this.requests(path).length;
        this.received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks),
          receivedAt: Date.now(),
        });
        const route = this.routes.get(path) ?? {};
        const pick = (list: number[] | undefined, fallback: number) =>
          list && list.length > 0 ? list[Math.min(index, list.length - 1)] : fallback;
        const answer = () => {
          if (res.destroyed) return;
          res.writeHead(pick(route.statuses, 200), {
            'content-type': 'text/plain',
            ...route.headers,
          });
          res.end(route.body ?? 'ok');
        };
        const delayed = () => {
          const delay = pick(route.delaysMs, 0);
          if (delay > 0) setTimeout(answer, delay);
          else answer();
        };
        if (this.holding.has(path)) {
          this.held.set(path, [...(this.held.get(path) ?? []), delayed]);
        } else {
          delayed();
        }
      });
    });
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
    return this.received.filter((r) => r.path === path);
  }

  /** Requests to `path` wait, once recorded, until release(path). */
  hold(path: string): void {
    this.holding.add(path);
  }

  release(path: string): void {
    this.holding.delete(path);
    for (const answer of this.held.get(path) ?? []) answer();
    this.held.delete(path);
  }

  async close(): Promise<void> {
    for (const path of [...this.holding]) this.release(path);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function startReceiver(): Promise<Receiver> {
  return new Receiver().start();
}
