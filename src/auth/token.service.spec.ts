import { JwtService } from '@nestjs/jwt';
import { loadConfig } from '../config/load-config';
import { TokenService } from './token.service';

const client = (id: string, scopes: string) => ({
  client_id: id,
  client_secret: `${id}-secret-0123456789`,
  scopes,
});

const tokensFor = (...clients: ReturnType<typeof client>[]) =>
  new TokenService(new JwtService(), loadConfig({ AUTH_CLIENTS: JSON.stringify(clients) }));

describe('TokenService: revocation through AUTH_CLIENTS', () => {
  const before = tokensFor(
    client('ops', 'webhooks:read webhooks:write'),
    client('gone', 'webhooks:read'),
  );

  it('verifies a token of a client still configured, with its scopes', () => {
    const { token } = before.issue('ops', ['webhooks:read', 'webhooks:write']);
    expect(before.verify(token)).toEqual({
      clientId: 'ops',
      scopes: ['webhooks:read', 'webhooks:write'],
    });
  });

  it('refuses the token of a client removed from AUTH_CLIENTS', () => {
    const { token } = before.issue('gone', ['webhooks:read']);
    const after = tokensFor(client('ops', 'webhooks:read webhooks:write'));
    expect(after.verify(token)).toBeNull();
  });

  it("cuts a token's scopes to those its client holds now", () => {
    const { token } = before.issue('ops', ['webhooks:read', 'webhooks:write']);
    const after = tokensFor(client('ops', 'webhooks:read meetings:read'));
    expect(after.verify(token)).toEqual({ clientId: 'ops', scopes: ['webhooks:read'] });
  });
});

describe('TokenService: portal link tokens', () => {
  const tokens = tokensFor(client('ops', 'webhooks:read webhooks:write meetings:read'));
  afterEach(() => jest.useRealTimers());

  it('marks them, so the session they open can be told from the client itself', () => {
    const { token, expiresIn } = tokens.issue('ops', ['webhooks:read'], {
      ttlSeconds: 120,
      portal: true,
    });
    expect(expiresIn).toBe(120);
    expect(tokens.verify(token)).toEqual({
      clientId: 'ops',
      scopes: ['webhooks:read'],
      portal: true,
    });
  });

  it('refuses them once their own lifetime is over, whatever AUTH_TOKEN_TTL_SECONDS says', () => {
    jest.useFakeTimers({ now: Date.parse('2026-03-01T12:00:00Z') });
    const { token } = tokens.issue('ops', ['webhooks:read'], { ttlSeconds: 60, portal: true });
    jest.setSystemTime(Date.parse('2026-03-01T12:00:59Z'));
    expect(tokens.verify(token)).not.toBeNull();
    jest.setSystemTime(Date.parse('2026-03-01T12:01:00Z'));
    expect(tokens.verify(token)).toBeNull();
  });
});
