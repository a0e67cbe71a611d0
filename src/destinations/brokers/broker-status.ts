/** A broker URL's credentials must never reach a log or an answer. */
export function withoutCredentials(text: string, url: string): string {
  let out = text.split(url).join('<broker url>');
  try {
    const parsed = new URL(url);
    if (parsed.password) out = out.split(decodeURIComponent(parsed.password)).join('****');
  } catch {
    // Validated by the config module; nothing to hide otherwise.
  }
  return out;
}

// An IPv4 or bracketed IPv6 address, with its port if any: what a socket error quotes.
const ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b|\[[0-9A-Fa-f:.]+\](:\d+)?/g;

/**
 * A broker's text as a client may read it (its delivery log): neither credentials nor where the
 * broker is (its host name, the addresses a socket error quotes). Operators read those in the
 * service's log.
 */
export function withoutAddress(text: string, url: string): string {
  let out = withoutCredentials(text, url);
  try {
    const { hostname } = new URL(url);
    if (hostname) out = out.split(hostname).join('<broker>');
  } catch {
    // As above.
  }
  return out.replace(ADDRESS, '<broker>');
}

const REASONS: [RegExp, string][] = [
  [/ECONNREFUSED|CONNECTION_REFUSED/i, 'connection refused'],
  [/ENOTFOUND|EAI_AGAIN/, 'host name not resolved'],
  [/EHOSTUNREACH|ENETUNREACH/, 'no route to the broker'],
  [/ACCESS.REFUSED|AUTHORIZATION|AUTHENTICATION|NOT.ALLOWED/i, 'credentials refused'],
  [/certificate|TLS|SSL/i, 'TLS handshake failed'],
  [/ETIMEDOUT|TIMEOUT|timed out/i, 'timed out'],
  [/ECONNRESET|EPIPE|hang up|closed/i, 'connection lost'],
];

/** Why a connection failed, as an unauthenticated or client-facing answer may say it. */
export function publicReason(detail: string): string | null {
  return REASONS.find(([pattern]) => pattern.test(detail))?.[1] ?? null;
}

/** Waits that grow from 500 ms to 30 s between reconnections. */
export const reconnectDelayMs = (failures: number): number =>
  Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
