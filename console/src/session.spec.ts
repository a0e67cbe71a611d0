import {
  SESSION_KEY,
  canWrite,
  isExpired,
  loadSession,
  portalToken,
  readClaims,
  saveSession,
  sessionFromToken,
  signIn,
} from './session';

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const jwt = (claims: object) => `${b64({ alg: 'HS256' })}.${b64(claims)}.signature`;

class MemoryStorage {
  private readonly items = new Map<string, string>();
  getItem = (key: string) => this.items.get(key) ?? null;
  setItem = (key: string, value: string) => void this.items.set(key, value);
  removeItem = (key: string) => void this.items.delete(key);
}
const memory = () => new MemoryStorage() as unknown as Storage;

describe('session from a token', () => {
  const token = jwt({ sub: 'alpha', scope: 'webhooks:read webhooks:write', exp: 2_000_000_000 });

  it('reads the client, scopes and expiry of the service token', () => {
    expect(sessionFromToken(token, true)).toEqual({
      token,
      clientId: 'alpha',
      scopes: ['webhooks:read', 'webhooks:write'],
      expiresAt: 2_000_000_000_000,
      portal: true,
    });
    expect(readClaims('garbage')).toBeNull();
    expect(readClaims(jwt({ sub: 'x' }))).toBeNull();
  });

  it('knows when it has expired and whether it may write', () => {
    const session = sessionFromToken(token, false)!;
    expect(isExpired(session, 1_999_999_999_999)).toBe(false);
    expect(isExpired(session, 2_000_000_000_000)).toBe(true);
    expect(canWrite(session)).toBe(true);
    expect(canWrite({ ...session, scopes: ['webhooks:read'] })).toBe(false);
  });

  it('keeps it in the storage given (sessionStorage) and forgets an expired one', () => {
    const storage = memory();
    const session = sessionFromToken(token, false)!;
    saveSession(storage, session);
    expect(loadSession(storage, 0)).toEqual(session);
    expect(loadSession(storage, 2_000_000_000_001)).toBeNull();
    expect(storage.getItem(SESSION_KEY)).toBeNull();
    storage.setItem(SESSION_KEY, '{not json');
    expect(loadSession(storage)).toBeNull();
  });
});

describe('portalToken', () => {
  it('takes the token from #portal=… and nothing else', () => {
    expect(portalToken('#portal=aaa.bbb.ccc')).toBe('aaa.bbb.ccc');
    expect(portalToken('#/webhooks')).toBeNull();
    expect(portalToken('#portal=a b')).toBeNull();
  });
});

describe('signIn', () => {
  const token = jwt({ sub: 'reader', scope: 'webhooks:read', exp: 2_000_000_000 });

  it('asks for bridge:admin, accounts:write, attendance:read and the webhook scopes only, and falls back to read for a read-only client', async () => {
    const scopes: string[] = [];
    const fetch = async (_url: string, init?: RequestInit) => {
      const form = new URLSearchParams(String(init?.body));
      scopes.push(form.get('scope') ?? '');
      return form.get('scope') === 'webhooks:read'
        ? Response.json({ access_token: token, token_type: 'bearer' })
        : Response.json(
            {
              error: 'invalid_scope',
              error_description: 'Client "reader" lacks scope webhooks:write',
            },
            { status: 400 },
          );
    };
    const session = await signIn('reader', 'secret', fetch);
    expect(session.scopes).toEqual(['webhooks:read']);
    expect(scopes).toEqual([
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
    ]);
  });

  it("throws the API's message for bad credentials", async () => {
    const fetch = async () =>
      Response.json(
        { statusCode: 401, error: 'invalid_client', message: 'Client authentication failed' },
        { status: 401 },
      );
    await expect(signIn('alpha', 'wrong', fetch)).rejects.toThrow('Client authentication failed');
  });
});
