import { FieldRule } from '../common/field-rule';

/** docs/destinations.md: static headers a webhook adds to every attempt (message headers for brokers). */
export type CustomHeaders = Record<string, string>;

export const HEADERS_MAX = 20;
export const HEADER_VALUE_MAX = 1024;
/** With HEADERS_MAX and HEADER_VALUE_MAX, bounds all of them: 20 × (256 + 1,024) characters. */
export const HEADER_NAME_MAX = 256;
const RESERVED = [
  'host',
  'content-type',
  'content-length',
  'connection',
  'transfer-encoding',
  'user-agent',
  'traceparent',
];
/**
 * Names that are about the connection or the message's framing, not the message: hop-by-hop
 * headers (RFC 9110 §7.6.1: Connection, Keep-Alive, Proxy-Connection, TE, Trailer,
 * Transfer-Encoding, Upgrade, and HTTP2-Settings of an h2c upgrade), `Expect` (a
 * 100-continue handshake the attempt does not make: undici refuses it, so every attempt would
 * fail), and `Content-Encoding`, which would lie about the body. Refused when set, rather than
 * failing every attempt or reaching the receiver as something else.
 */
export const CONNECTION_HEADERS = [
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-encoding',
  'http2-settings',
];
const RESERVED_PREFIXES = ['x-service-', 'webhook-'];
// RFC 9110 token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * A header name as the member of `headers` a message names: `.name`, or `["name"]` (JSON) when
 * it is no token, so that a space or colon in it stays part of the name. Never a value, which
 * may be a credential.
 */
const member = (name: string) => {
  const cut = name.length > 64 ? `${name.slice(0, 61)}…` : name;
  return TOKEN.test(name) ? `.${cut}` : `[${JSON.stringify(cut)}]`;
};

/**
 * The `headers` object. Messages name `headers.<name>` and never repeat a value. Names are
 * compared case-insensitively, as HTTP does.
 */
export const headersRule: FieldRule = (value, field) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `${field} must be an object of header names and values (null removes them)`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > HEADERS_MAX) {
    return `${field} may hold at most ${HEADERS_MAX} headers, got ${entries.length}`;
  }
  const seen = new Set<string>();
  for (const [name, headerValue] of entries) {
    const at = `${field}${member(name)}`;
    const lower = name.toLowerCase();
    if (name.length > HEADER_NAME_MAX) {
      return `${at}: a header name may be at most ${HEADER_NAME_MAX} characters, got ${name.length}`;
    }
    if (!TOKEN.test(name)) return `${at}: a header name must be an HTTP token`;
    if (RESERVED.includes(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p))) {
      return `${at}: the service sets this header itself; it cannot be a custom header`;
    }
    if (CONNECTION_HEADERS.includes(lower)) {
      return `${at}: a header about the connection or the message's framing cannot be a custom header`;
    }
    if (seen.has(lower)) return `${at}: given twice (header names ignore case)`;
    seen.add(lower);
    if (typeof headerValue !== 'string') return `${at} must be a string`;
    if (headerValue.length > HEADER_VALUE_MAX || !PRINTABLE_ASCII.test(headerValue)) {
      return `${at} must be printable ASCII of at most ${HEADER_VALUE_MAX} characters`;
    }
  }
  return null;
};

/**
 * A value as every answer and log shows it: the last four characters behind asterisks, or
 * asterisks alone when the value is too short for four to leave most of it unseen.
 */
export const maskHeaderValue = (value: string): string =>
  value.length >= 12 ? `****${value.slice(-4)}` : '****';

export const maskHeaders = (headers: CustomHeaders): CustomHeaders =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskHeaderValue(v)]));
