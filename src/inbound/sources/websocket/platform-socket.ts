import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { exceedsJsonDepth } from '../../../common/json-depth';
import { parsePrecise, stringifyPrecise } from '../../../common/precise-json';

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
  /** A frame over MAX_FRAME_BYTES: closed with 1009 before it was read. */
  | 'too_large'
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
   * as text is given as its JSON), or null when the frame held none, or none that can be
   * written back (nested past MAX_JSON_DEPTH): `frame` is then all there is to keep. `frame`
   * is text, or the frame's bytes when they are not UTF-8 (a binary frame).
   */
  event(content: string | null, frame: string | Buffer): void;
  /** A frame of another module, or one that is not a JSON object, for the debug log. */
  other(description: string, frame: string | null): void;
  /**
   * Reading a frame threw: a bug, never a reason to lose the frame or the process. The
   * listener logs and counts it, and keeps `frame` as it keeps an unreadable one.
   */
  fault(error: unknown, frame: string | Buffer): void;
  ended(end: SocketEnd): void;
}

/**
 * The largest frame read (the webhook's body limit, 1 MiB). ws checks each frame's announced
 * length (and a fragmented message's running total) before buffering it, so a larger frame is
 * never read into memory: the socket is closed with 1009 (message too big).
 */
export const MAX_FRAME_BYTES = 1024 * 1024;
const MESSAGE_TOO_BIG = 1009;
const TOO_BIG_ERROR = 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH';

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
  private acknowledgedAtMs: number | null = null;
  private done = false;

  constructor(
    url: string,
    private readonly secret: string,
    private readonly heartbeatMs: number,
    private readonly listener: SocketListener,
  ) {
    this.ws = new WebSocket(url, {
      handshakeTimeout: 2 * heartbeatMs,
      perMessageDeflate: false,
      maxPayload: MAX_FRAME_BYTES,
    });
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
    this.ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      // Called from the socket's data handler: what escapes here would end the process.
      try {
        this.receive(bytes, isBinary);
      } catch (error) {
        this.listener.fault(error, isUtf8(bytes) ? bytes.toString('utf8') : bytes);
      }
    });
    this.ws.on('close', (code: number, reason: Buffer) => {
      const why = `closed by the platform with code ${code}${reason.length > 0 ? ` (${this.redact(reason.toString('utf8'))})` : ''}`;
      this.end(code === POLICY_VIOLATION ? 'refused' : 'closed', why);
    });
    this.ws.on('error', (error: Error & { code?: string }) => {
      // ws has already sent the close frame with 1009 and read no more of the frame.
      if (error.code === TOO_BIG_ERROR) {
        this.end(
          'too_large',
          `a frame over ${MAX_FRAME_BYTES} bytes (closed with ${MESSAGE_TOO_BIG})`,
        );
      } else {
        this.end('failed', this.redact(error.message));
      }
    });
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

  /** Epoch ms of the acknowledgement, or null when none came. */
  get acknowledgedAt(): number | null {
    return this.acknowledgedAtMs;
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
    // ws refuses a text frame that is not UTF-8 (1007); a binary frame may be anything. One
    // whose bytes are UTF-8 is read as text; any other is kept as its bytes, never decoded
    // with replacement characters.
    if (isBinary && !isUtf8(data)) {
      this.listener.event(null, data);
      return;
    }
    const text = data.toString('utf8');
    let frame: unknown;
    try {
      // Any depth parses (V8's JSON.parse does not recurse); numbers past 2^53 keep their text.
      frame = parsePrecise(text);
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
          this.acknowledgedAtMs = at.getTime();
          this.listener.acknowledged(at);
        }
        return;
      case 'heartbeat':
        return;
      case 'message': {
        const content = frame.content;
        if (typeof content === 'string') this.listener.event(content, text);
        else if (content === undefined || content === null) this.listener.event(null, text);
        // Writing JSON back recurses: past MAX_JSON_DEPTH the whole frame is kept instead
        // (5,000 levels once threw RangeError here and ended the process).
        else if (exceedsJsonDepth(content)) this.listener.event(null, text);
        else this.listener.event(stringifyPrecise(content), text);
        return;
      }
      default:
        // Only a short name is quoted: a module may be any JSON, of any size or depth.
        this.listener.other(
          typeof frame.module === 'string'
            ? `module ${JSON.stringify(frame.module.slice(0, 100))}`
            : `module of type ${frame.module === null ? 'null' : typeof frame.module}`,
          text,
        );
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
    } else if (kind === 'too_large') {
      // The 1009 close frame is on its way: let it reach the platform, then make sure.
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
