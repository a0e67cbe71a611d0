import { Fetch, problemFrom } from './api';

/** What the console keeps of a sign-in: in sessionStorage only, never in a cookie. */
export interface Session {
  token: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  scopes: string[];
  clientId: string;
  /** Signed in through a portal link rather than with the client's secret. */
  portal: boolean;
}

export const SESSION_KEY = 'meb.console.session';
export const WRITE_SCOPE = 'webhooks:write';

/** The claims of the service's own token that the console reads (for display and expiry). */
export function readClaims(token: string): { sub: string; scope: string; exp: number } | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as { sub?: unknown; scope?: unknown; exp?: unknown };
    if (typeof claims.sub !== 'string' || typeof claims.scope !== 'string') return null;
    if (typeof claims.exp !== 'number') return null;
    return { sub: claims.sub, scope: claims.scope, exp: claims.exp };
  } catch {
    return null;
  }
}

export function sessionFromToken(token: string, portal: boolean): Session | null {
  const claims = readClaims(token);
  if (!claims) return null;
  return {
    token,
    expiresAt: claims.exp * 1000,
    scopes: claims.scope.split(' ').filter(Boolean),
    clientId: claims.sub,
    portal,
  };
}

/**
 * The portal token in a URL fragment (`#portal=<token>`), as POST /api/portal-links makes
 * it; null for any other fragment.
 */
export function portalToken(hash: string): string | null {
  const match = /^#?portal=([A-Za-z0-9._-]+)$/.exec(hash);
  return match ? match[1] : null;
}

export const isExpired = (session: Session, now = Date.now()): boolean => now >= session.expiresAt;

export const canWrite = (session: Session): boolean => session.scopes.includes(WRITE_SCOPE);
/** The operator's pages (inbound status, docs/inbound-sources.md) need bridge:admin. */
export const isAdmin = (session: Session): boolean => session.scopes.includes('bridge:admin');

/** The Accounts page lists with accounts:write or bridge:admin (docs/accounts.md). */
export const canSeeAccounts = (session: Session): boolean =>
  canManageAccounts(session) || isAdmin(session);
/** Installing and removing platform accounts needs accounts:write. */
export const canManageAccounts = (session: Session): boolean =>
  session.scopes.includes('accounts:write');

/** The Attendance page needs attendance:read. */
export const canReadAttendance = (session: Session): boolean =>
  session.scopes.includes('attendance:read');

export function loadSession(storage: Storage, now = Date.now()): Session | null {
  try {
    const raw = storage.getItem(SESSION_KEY);
    if (!raw) return null;
    const session = JSON.parse(raw) as Session;
    if (typeof session.token !== 'string' || isExpired(session, now)) {
      storage.removeItem(SESSION_KEY);
      return null;
    }
    return session;
  } catch {
    return null;
  }
}

export function saveSession(storage: Storage, session: Session | null): void {
  if (session) storage.setItem(SESSION_KEY, JSON.stringify(session));
  else storage.removeItem(SESSION_KEY);
}

// The console needs no other scopes: it asks for the webhook ones (and an operator's
// bridge:admin, for the Inbound and Reconciliation pages) only, so a client with meetings:write
// does not leave a token for it in the tab. A client without bridge:admin gets the webhook
// ones; a read-only client gets read.
// Each level is asked with the optional pages' scopes first, then with fewer: accounts:write
// (the Accounts page, docs/accounts.md) and attendance:read (the Attendance page,
// docs/attendance.md).
const SCOPE_CHOICES = [
  'bridge:admin accounts:write attendance:read webhooks:read webhooks:write',
  'bridge:admin attendance:read webhooks:read webhooks:write',
  'bridge:admin accounts:write webhooks:read webhooks:write',
  'bridge:admin webhooks:read webhooks:write',
  'accounts:write attendance:read webhooks:read webhooks:write',
  'attendance:read webhooks:read webhooks:write',
  'accounts:write webhooks:read webhooks:write',
  'webhooks:read webhooks:write',
  'accounts:write attendance:read webhooks:read',
  'attendance:read webhooks:read',
  'accounts:write webhooks:read',
  'webhooks:read',
];

/** Signs in with client credentials at /oauth/token; throws the API's message on failure. */
export async function signIn(
  clientId: string,
  clientSecret: string,
  fetch: Fetch = (input, init) => globalThis.fetch(input, init),
): Promise<Session> {
  let last: unknown = null;
  for (const scope of SCOPE_CHOICES) {
    const res = await fetch('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
        scope,
      }).toString(),
      cache: 'no-store',
      // No cookie is wanted, and with none offered the browser shows no password prompt for
      // the 401's Basic challenge: the page shows the API's message instead.
      credentials: 'omit',
    });
    const body = (await res.json().catch(() => null)) as {
      access_token?: string;
      error?: string;
    } | null;
    if (res.ok && body?.access_token) {
      const session = sessionFromToken(body.access_token, false);
      if (session) return session;
    }
    // A client without webhooks:write is refused the first scope set: try the next.
    if (res.status === 400 && body?.error === 'invalid_scope') {
      last = problemFrom(res.status, body);
      continue;
    }
    throw problemFrom(res.status, body);
  }
  throw last instanceof Error ? last : new Error('Sign-in failed');
}
