import { once } from 'node:events';
import { IncomingMessage, Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { now } from './support';

/** Local receivers: each notification's arrival time, by the meeting uuid it carries. */
export class Subscriber {
  readonly arrivals = new Map<string, number>();
  duplicates = 0;
  total = 0;
  private servers: Server[] = [];
  urls: string[] = [];

  async start(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const server = createServer((req, res) => this.take(req, () => res.writeHead(200).end()));
      server.keepAliveTimeout = 60_000;
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      this.servers.push(server);
      this.urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    }
  }

  private take(req: IncomingMessage, done: () => void): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data: { uuid: string };
      };
      // One key per (event, webhook): fan-out deliveries of one event arrive on distinct paths.
      const key = `${body.data.uuid} ${req.url}`;
      this.total++;
      if (this.arrivals.has(key)) this.duplicates++;
      else this.arrivals.set(key, at);
      done();
    });
  }

  arrivalOf(uuid: string, path = '/hook'): number | undefined {
    return this.arrivals.get(`${uuid} ${path}`);
  }

  /** Until every one of `keys` has arrived; after `timeoutMs` (a burst's longest wait), an error naming `what`. */
  async waitFor(keys: string[], what: string, timeoutMs = 180_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let missing = keys;
    while (Date.now() < deadline) {
      missing = missing.filter((k) => !this.arrivals.has(k));
      if (missing.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`${what}: ${missing.length} of ${keys.length} never arrived`);
  }

  close(): void {
    for (const server of this.servers) server.close();
  }
}
