/**
 * A platform REST operation as the client calls it. The passthrough's operations come from the
 * route table generated from the platform's published document (src/platform-api), so a call
 * the platform does not publish cannot be made.
 */
export interface ZoomOperation {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** OpenAPI path template relative to the REST base (`…/v2`). */
  path: string;
}

/**
 * How the module that owns an operation's path parameters wants them in the path, by name
 * (src/platform-api/path-rules.ts); the client knows none of them itself.
 */
export type PathEncoders = Readonly<
  Partial<Record<string, { encode?: (value: string) => string }>>
>;

/**
 * `.` and `..`: whole segments that URL normalisation removes, sending a request (and its bearer
 * token) to another endpoint. Never put in a path, whoever gave them (passthrough refuses them
 * too: src/platform-api/request-validator.ts).
 */
export const isDotSegment = (value: string): boolean => value === '.' || value === '..';

/** What would end a path segment, or the path. */
const SEGMENT_END = /[/?#]/;

/**
 * The operation's path with its parameters encoded, plus `query`, a query string passed as
 * it is (already encoded, without `?`). A parameter is encoded once unless `encoders` says
 * otherwise for it; either way it stays one segment of the path.
 */
export function buildZoomPath(
  operation: ZoomOperation,
  params: Record<string, string> = {},
  query = '',
  encoders: PathEncoders = {},
): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') {
      throw new Error(`${operation.method} ${operation.path}: path parameter ${name} is missing`);
    }
    const encoded = (encoders[name]?.encode ?? encodeURIComponent)(value);
    if (SEGMENT_END.test(encoded) || isDotSegment(encoded)) {
      throw new Error(`${operation.method} ${operation.path}: ${name} would leave its segment`);
    }
    return encoded;
  });
  return query ? `${path}?${query}` : path;
}

/**
 * The raw query string without the parameters named in `drop`, every other pair left exactly as
 * the caller wrote it (order, repeats and encoding included).
 */
export function queryWithout(raw: string, drop: readonly string[]): string {
  if (raw === '' || drop.length === 0) return raw;
  return raw
    .split('&')
    .filter((pair) => {
      const name = pair.split('=')[0].replace(/\+/g, ' ');
      try {
        return !drop.includes(decodeURIComponent(name));
      } catch {
        return true;
      }
    })
    .join('&');
}
