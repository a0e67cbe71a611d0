import { JwtService } from '@nestjs/jwt';
import { TokenService } from '../auth/token.service';
import { ApiError } from '../common/api-error';
import { loadConfig } from '../config/load-config';
import { PortalLinksService } from './portal-links.service';

const CLIENTS = JSON.stringify([
  {
    client_id: 'crm',
    client_secret: 'crm-secret-0123456789',
    scopes: 'webhooks:write meetings:read',
  },
]);

function service(env: Record<string, string> = {}) {
  const config = loadConfig({
    AUTH_CLIENTS: CLIENTS,
    PUBLIC_BASE_URL: 'https://bridge.example.com',
    ...env,
  });
  const tokens = new TokenService(new JwtService(), config);
  return { links: new PortalLinksService(tokens, config), tokens };
}

describe('PortalLinksService', () => {
  const now = new Date('2026-03-01T12:00:00.400Z');

  it('links to /console with a token in the fragment, narrowed to the webhook scopes the client holds', () => {
    const { links, tokens } = service();
    const link = links.create(
      { clientId: 'crm', scopes: ['webhooks:write', 'meetings:read'] },
      600,
      now,
    );
    expect(link.expires_at).toBe('2026-03-01T12:10:00.000Z');
    const match = /^https:\/\/bridge\.example\.com\/console\/#portal=([\w.-]+)$/.exec(link.url);
    expect(match).not.toBeNull();
    expect(tokens.verify(match?.[1] ?? '')).toEqual({
      clientId: 'crm',
      scopes: ['webhooks:write'],
      portal: true,
    });
  });

  it("refuses a portal link's own session, so a link cannot be renewed past its expiry", () => {
    const { links } = service();
    expect(() =>
      links.create({ clientId: 'crm', scopes: ['webhooks:write'], portal: true }, 600, now),
    ).toThrow(ApiError);
  });

  it('refuses while the console is turned off', () => {
    const { links } = service({ CONSOLE_ENABLED: 'false' });
    expect(() => links.create({ clientId: 'crm', scopes: ['webhooks:write'] }, 600, now)).toThrow(
      /CONSOLE_ENABLED=false/,
    );
  });
});
