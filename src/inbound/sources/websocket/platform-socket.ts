import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';

/** Why a socket ended (docs/inbound-sources.md#reconnection). */
export type SocketEndKind =
  /** The platform refused the token: build_connection false, HTTP 401, close 1008. */
  | 'refused'
  /** The platform closed it, or the upgrade was answered with another status. */
  | 'closed'
  /** A network or protocol error. */
  | 'failed'
  /** No frame for two heartbeat intervals. */
  | 'silent'
  /** This process closed it (lease lost, shutdown, a fresh token's socket took over). */
  | 'stopped';

export interface SocketEnd {
  kind: SocketEndKind;
  /** For the log; never holds the URL or the token. */
  detail: string;
}

/** What one socket reports; `ended` comes exactly once, last. */
export interface SocketListener {
  acknowledged(at: Date): void;
  /** Any frame, at the time it came. */
  frame(at: Date): void;
  /**
   * A `message` frame: `content` is its event as text (a `content` sent as JSON rather than
   * as text is given as its JSON), or null when the frame held none: `frame` is then all
   * there is to keep.
   */
  event(content: string | null, frame: string): void;
  /** A frame of another module, or one that is not a JSON object, for the debug log. */
  other(description: string, frame: string | null): void;
  ended(end: SocketEnd): void;
}

/** Close codes: 1008 is the platform's "policy violation" for a token it will not take. */
const POLICY_VIOLATION = 1008;
const NORMAL = 1000;
const HEARTBEAT = JSON.stringify({ module: 'heartbeat' });

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One connection to the platform's event socket: the three frame kinds, the heartbeat every
 * `heartbeatMs`, and the silence check (no frame for two intervals). It never reconnects:
 * WebsocketSource decides what comes next from how it ended.
 *
 * The URL carries the access token, so nothing said about this socket quotes it: ws's own
 * error messages are passed through `redact` before anyone sees them.
 */
export class PlatformSocket {
  private readonly ws: WebSocket;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly silence: NodeJS.Timeout;
  private lastFrame = Date.now();
  private acknowledged = false;
  private done = false;

  constructor(
    url: string,
    private readonly secret: string,
    private readonly heartbeatMs: number,
    private readonly listener: SocketListener,
  ) {
    this.ws = new WebSocket(url, { handshakeTimeout: 2 * heartbeatMs, perMessageDeflate: false });
    this.ws.on('unexpected-response', (_req, res: IncomingMessage) => {
      res.resume();
      this.end(
        res.statusCode === 401 ? 'refused' : 'closed',
        `the upgrade was answered with HTTP ${res.statusCode}`,
      );
    });
    this.ws.on('open', () => {
      this.lastFrame = Date.now();
    });
    this.ws.on('message', (data: WebSocket.RawData, isBinary: boolean) =>
      this.receive(Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer), isBinary),
    );
    this.ws.on('close', (code: number, reason: Buffer) => {
      const why = `closed by the platform with code ${code}${reason.length > 0 ? ` (${this.redact(reason.toString('utf8'))})` : ''}`;
      this.end(code === POLICY_VIOLATION ? 'refused' : 'closed', why);
    });
    this.ws.on('error', (error: Error) => this.end('failed', this.redact(error.message)));
    this.heartbeat = setInterval(() => {
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(HEARTBEAT);
    }, heartbeatMs);
    this.silence = setInterval(
      () => {
        const quiet = Date.now() - this.lastFrame;
        if (quiet > 2 * heartbeatMs) this.end('silent', `no frame for ${quiet} ms`);
      },
      Math.max(50, Math.floor(heartbeatMs / 4)),
    );
  }

  get isAcknowledged(): boolean {
    return this.acknowledged && !this.done;
  }

  /** Closes it from this side; `ended` reports `stopped`. */
  close(detail: string): void {
    this.end('stopped', detail);
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (this.done) return;
    const at = new Date();
    this.lastFrame = at.getTime();
    this.listener.frame(at);
    const text = data.toString('utf8');
    let frame: unknown;
    try {
      frame = isBinary ? undefined : JSON.parse(text);
    } catch {
      frame = undefined;
    }
    if (!isObject(frame)) {
      // Not a frame of the protocol: kept like an event, since nothing read is dropped.
      this.listener.event(null, text);
      return;
    }
    switch (frame.module) {
      case 'build_connection':
        if (frame.success === false) {
          this.end('refused', 'build_connection answered success false');
        } else {
          this.acknowledged = true;
          this.listener.acknowledged(at);
        }
        return;
      case 'heartbeat':
        return;
      case 'message': {
        const content = frame.content;
        if (typeof content === 'string') this.listener.event(content, text);
        else if (content === undefined || content === null) this.listener.event(null, text);
        else this.listener.event(JSON.stringify(content), text);
        return;
      }
      default:
        this.listener.other(`module ${JSON.stringify(frame.module)}`, text);
    }
  }

  private end(kind: SocketEndKind, detail: string): void {
    if (this.done) return;
    this.done = true;
    clearInterval(this.heartbeat);
    clearInterval(this.silence);
    if (kind === 'stopped' && this.ws.readyState === WebSocket.OPEN) {
      this.ws.close(NORMAL);
      // A peer that never answers the close must not keep the socket.
      setTimeout(() => this.ws.terminate(), 1000).unref();
    } else {
      this.ws.terminate();
    }
    this.listener.ended({ kind, detail });
  }

  private redact(text: string): string {
    return this.secret === '' ? text : text.split(this.secret).join('[token]');
  }
}
