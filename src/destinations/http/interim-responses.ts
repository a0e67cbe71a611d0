import type { Socket } from 'node:net';

/** `HTTP/1.x 1nn` where nn is not 01: an interim answer (101 switches protocols; not skipped). */
const INTERIM_STATUS = /^HTTP\/1\.[01] 1(?!01)\d\d[ \r]/;
const STATUS_PREFIX = 'HTTP/1.x 1nn ';
/** Longest interim head held back; past it the bytes go on to the parser, which judges them. */
const MAX_INTERIM_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
/** How undici starts writing a request: its request line. */
const REQUEST_LINE = /^[A-Z]+ \S+ HTTP\/1\.1\r\n/;

/** Whether these first bytes could still become an interim status line. */
function mayBeInterim(head: Buffer): boolean {
  const text = head.toString('latin1', 0, STATUS_PREFIX.length);
  if (text.length >= STATUS_PREFIX.length) return INTERIM_STATUS.test(text);
  return (
    /^HTTP\/1\.[01] 1\d{0,2}$/.test(text) ||
    'HTTP/1.1 '.startsWith(text) ||
    'HTTP/1.0 '.startsWith(text)
  );
}

/**
 * Makes the connection skip the interim (1xx) answers a receiver sends before its final one.
 * RFC 9110 §15.2: a client must be able to parse one or more 1xx responses received before a
 * final response, even if it did not expect one. undici's HTTP/1.1 parser instead fails the
 * request on an unsolicited `100 Continue` (UND_ERR_SOCKET "bad response", undici 7 and 8
 * alike), which made every attempt to such a receiver fail. Deliveries go one request at a
 * time per connection, so the bytes after a request line are written start a response: there,
 * interim heads (status line to the blank line) are dropped before undici's parser reads them
 * (it reads with socket.read()); anything else passes untouched.
 */
export function skipInterimResponses(socket: Socket): Socket {
  const read = socket.read.bind(socket);
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let atResponseStart = false;
  let held: Buffer | null = null;

  socket.write = ((...args: unknown[]) => {
    const chunk = args[0];
    if (typeof chunk === 'string' ? REQUEST_LINE.test(chunk) : false) atResponseStart = true;
    return write(...args);
  }) as Socket['write'];

  socket.read = ((size?: number) => {
    for (;;) {
      const chunk = read(size) as Buffer | null;
      if (chunk === null) return null;
      if (!atResponseStart) return chunk;
      let bytes: Buffer = held === null ? chunk : Buffer.concat([held, chunk]);
      held = null;
      for (;;) {
        if (!mayBeInterim(bytes)) {
          atResponseStart = false;
          return bytes;
        }
        const end = bytes.indexOf(HEAD_END);
        if (end < 0) {
          if (bytes.length > MAX_INTERIM_HEAD) {
            atResponseStart = false;
            return bytes;
          }
          held = bytes;
          break;
        }
        bytes = bytes.subarray(end + HEAD_END.length);
        if (bytes.length === 0) break;
      }
    }
  }) as Socket['read'];
  return socket;
}
