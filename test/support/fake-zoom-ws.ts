import { once } from 'node:events';
import { IncomingMessage, Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/** How the fake refuses a token it does not accept (each is one the platform uses). */
export type Refusal = 'http401' | 'build_connection' | 'close1008';

export interface FakeZoomWsOptions {
  subscriptionId?: string;
  /** Whether a token is good: FakeZoom's acceptsToken, so tokens come from its token endpoint. */
  acceptsToken: (token: string) => boolean;
  /** How a bad token is refused (default: HTTP 401 on the upgrade). */
  refusal?: Refusal;
}

/** One socket as the fake saw it. */
export interface FakeConnection {
  ws: WebSocket;
  token: string;
  openedAt: number;
  /** build_connection success was sent (not while the fake is silent). */
  acknowledged: boolean;
  closedAt: number | null;
  /** How it ended: who closed it and with what code. */
  closeCode: number | null;
}

/**
 * A local stand-in for the platform's event WebSocket (`wss://ws.zoom.us/ws`), behaving as
 * its documentation describes: the upgrade carries `subscriptionId` and `access_token`;
 * a good token gets `{"module":"build_connection","success":true}`, a heartbeat
 * `{"module":"heartbeat"}` gets one back, events come as `{"module":"message","content":"<the
 * event as JSON text>"}`; one connection per subscription: a new one closes the older.
 *
 * Test controls: push events or raw frames, close the socket (any code), refuse the next
 * connections whatever their token, stop answering (no ack, no heartbeat answer), and counts:
 * connections, the most open at once, the older ones closed by a newer, heartbeats.
 */
export class FakeZoomWs {
  readonly subscriptionId: string;
  url = '';
  /** Every accepted upgrade, in order. */
  readonly connections: FakeConnection[] = [];
  /** Upgrades refused, by how. */
  readonly refused: Refusal[] = [];
  /** The most sockets open at once (accepted or being refused). */
  maxOpen = 0;
  /** Older connections the fake closed because a newer one opened. */
  replaced = 0;
  heartbeats = 0;
  refusal: Refusal;
  /** While true, nothing is answered: no acknowledgement, no heartbeat. */
  silent = false;
  /** This many of the next connections are acknowledged and then closed at once (code 1001). */
  closeAfterAcknowledging = 0;

  private readonly open = new Set<WebSocket>();
  private readonly refuseNext: Refusal[] = [];
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly options: FakeZoomWsOptions) {
    this.subscriptionId = options.subscriptionId ?? 'fake-ws-subscription';
    this.refusal = options.refusal ?? 'http401';
    this.server = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'Upgrade Required' }));
    });
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) =>
      this.upgrade(req, socket, head),
    );
  }

  static async start(options: FakeZoomWsOptions): Promise<FakeZoomWs> {
    const fake = new FakeZoomWs(options);
    fake.server.listen(0, '127.0.0.1');
    await once(fake.server, 'listening');
    fake.url = `ws://127.0.0.1:${(fake.server.address() as AddressInfo).port}/ws`;
    return fake;
  }

  /** Environment for the app under test (with FakeZoom's env for the credentials). */
  env(heartbeatMs = 1000): Record<string, string> {
    return {
      ZOOM_WS_SUBSCRIPTION_ID: this.subscriptionId,
      ZOOM_WS_URL: this.url,
      ZOOM_WS_HEARTBEAT_MS: String(heartbeatMs),
    };
  }

  /** Sockets open now. */
  get openCount(): number {
    return this.open.size;
  }

  /** The connection open now, if exactly one is. */
  get current(): FakeConnection | null {
    const open = this.connections.filter((c) => c.closedAt === null);
    return open.length === 1 ? open[0] : null;
  }

  /** The next `count` upgrades are refused with `how`, whatever their token. */
  refuseNextConnections(how: Refusal, count = 1): void {
    for (let i = 0; i < count; i++) this.refuseNext.push(how);
  }

  /** Sends one event (an object is sent as its JSON text, as the platform does). */
  push(event: unknown): void {
    const content = typeof event === 'string' ? event : JSON.stringify(event);
    this.pushFrame(JSON.stringify({ module: 'message', content }));
  }

  /** Sends one frame as it is, to the open connection: text, or a Buffer as a binary frame. */
  pushFrame(frame: string | Buffer): void {
    const connection = this.current;
    if (connection === null) throw new Error(`no single open connection (${this.openCount} open)`);
    connection.ws.send(frame, { binary: Buffer.isBuffer(frame) });
  }

  /** The platform closes the open connection with `code`. */
  closeCurrent(code = 1001, reason = 'going away'): void {
    this.current?.ws.close(code, reason);
  }

  async close(): Promise<void> {
    for (const ws of this.open) ws.terminate();
    for (const socket of this.sockets) socket.destroy();
    this.wss.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const query = new URL(req.url ?? '/', 'http://fake').searchParams;
    if (query.get('subscriptionId') !== this.subscriptionId) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const token = query.get('access_token') ?? '';
    const forced = this.refuseNext.shift();
    const refusal = forced ?? (this.options.acceptsToken(token) ? null : this.refusal);
    if (refusal === 'http401') {
      this.refused.push(refusal);
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.open.add(ws);
      this.maxOpen = Math.max(this.maxOpen, this.open.size);
      if (refusal !== null) {
        this.refused.push(refusal);
        ws.on('close', () => this.open.delete(ws));
        if (refusal === 'close1008') ws.close(1008, 'Invalid access token');
        else ws.send(JSON.stringify({ module: 'build_connection', success: false }));
        return;
      }
      // One connection per subscription: the platform closes the older one.
      for (const older of this.connections.filter((c) => c.closedAt === null)) {
        this.replaced++;
        older.ws.close(4000, 'replaced by a newer connection');
      }
      const connection: FakeConnection = {
        ws,
        token,
        openedAt: Date.now(),
        acknowledged: !this.silent,
        closedAt: null,
        closeCode: null,
      };
      this.connections.push(connection);
      ws.on('close', (code) => {
        this.open.delete(ws);
        connection.closedAt = Date.now();
        connection.closeCode = code;
      });
      ws.on('message', (data: Buffer) => {
        if (this.silent) return;
        let frame: { module?: unknown } = {};
        try {
          frame = JSON.parse(data.toString('utf8')) as { module?: unknown };
        } catch {
          return;
        }
        if (frame.module === 'heartbeat') {
          this.heartbeats++;
          ws.send(JSON.stringify({ module: 'heartbeat', success: true }));
        }
      });
      if (!this.silent) {
        ws.send(JSON.stringify({ module: 'build_connection', success: true, content: 'ok' }));
        if (this.closeAfterAcknowledging > 0) {
          this.closeAfterAcknowledging--;
          ws.close(1001, 'going away');
        }
      }
    });
  }
}
