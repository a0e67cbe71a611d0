import { Socket, connect } from 'node:net';

export interface RawAnswer {
  /** Status of the first answer on the connection, null when none came. */
  status: number | null;
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** The JSON body of the first answer, when it has one. */
  body: unknown;
  /**
   * How the exchange ended: the server closed the connection, reset it, it was still open at
   * the deadline, or (with `untilAnswered`) the first answer was complete.
   */
  ended: 'closed' | 'reset' | 'deadline' | 'answered';
}

export interface RawOptions {
  /** Give up (and destroy the socket) this long after connecting. */
  deadlineMs?: number;
  /**
   * Called once connected, after `bytes` are written: keeps sending (a slow body, a body that
   * follows oversized headers) until the socket is closed. Returns a stop function.
   */
  then?: (socket: Socket) => () => void;
  /** Stop as soon as the first answer is complete, rather than when the server closes. */
  untilAnswered?: boolean;
}

/** Whether `text` holds one whole answer (Content-Length or chunked framing). */
function isComplete(text: string): boolean {
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return false;
  const head = text.slice(0, split);
  if (/^HTTP\/1\.[01] (1\d\d|204|304)/.test(head)) return true;
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) return text.length - split - 4 >= Number(length[1]);
  return /\r\ntransfer-encoding: *chunked/i.test(head) && text.endsWith('0\r\n\r\n');
}

function parseAnswer(text: string): Pick<RawAnswer, 'status' | 'body'> {
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  const split = text.indexOf('\r\n\r\n');
  let body: unknown;
  if (split >= 0) {
    try {
      body = JSON.parse(text.slice(split + 4));
    } catch {
      body = undefined;
    }
  }
  return { status: status ? Number(status[1]) : null, body };
}

/**
 * Sends exact bytes on a fresh TCP connection to `baseUrl` and reads until the server closes
 * it: for what fetch cannot send (bytes that are not HTTP, headers past the limit, a body that
 * trickles in).
 */
export function rawExchange(
  baseUrl: string,
  bytes: Buffer | string,
  { deadlineMs = 10_000, then, untilAnswered = false }: RawOptions = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let stop: () => void = () => undefined;
    let settled = false;
    const socket = connect(Number(port), hostname);
    const finish = (ended: RawAnswer['ended']) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      stop();
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ ...parseAnswer(text), text, ended });
    };
    const deadline = setTimeout(() => finish('deadline'), deadlineMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (untilAnswered && isComplete(Buffer.concat(chunks).toString('latin1'))) finish('answered');
    });
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('closed'));
    socket.on('connect', () => {
      socket.write(bytes, (error) => {
        if (!error && then && !settled) stop = then(socket);
      });
    });
  });
}

/** Keeps writing `byte` every `everyMs` until stopped or the socket closes. */
export const trickle =
  (everyMs: number, byte = 'a') =>
  (socket: Socket): (() => void) => {
    const timer = setInterval(() => {
      if (!socket.destroyed && socket.writable) socket.write(byte);
    }, everyMs);
    return () => clearInterval(timer);
  };
