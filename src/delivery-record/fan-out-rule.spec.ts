import { loadConfig } from '../config/load-config';
import { receives, receivingClients } from './fan-out-rule';

describe('the fan-out rule by platform account', () => {
  const config = loadConfig({
    NODE_ENV: 'test',
    AUTH_CLIENTS: JSON.stringify([
      { client_id: 'all', client_secret: 'all-secret-0123456789', scopes: 'webhooks:read' },
      {
        client_id: 'one',
        client_secret: 'one-secret-0123456789',
        scopes: 'webhooks:read',
        accounts: ['acct-1'],
      },
      {
        client_id: 'none',
        client_secret: 'none-secret-012345678',
        scopes: 'webhooks:read',
        accounts: [],
      },
    ]),
  });
  const clients = receivingClients(config);
  const hook = (owner: string) => ({ active: true, ownerClientId: owner, events: ['zoom.*'] });
  const body = (accountId?: string) => ({
    source:
      accountId === undefined ? { platform: 'zoom' } : { platform: 'zoom', account_id: accountId },
  });

  it('delivers an account’s events to clients holding every account or that one', () => {
    expect(receives(hook('all'), 'zoom.meeting.started', clients, body('acct-1'))).toBe(true);
    expect(receives(hook('one'), 'zoom.meeting.started', clients, body('acct-1'))).toBe(true);
    expect(receives(hook('one'), 'zoom.meeting.started', clients, body('acct-2'))).toBe(false);
    expect(receives(hook('none'), 'zoom.meeting.started', clients, body('acct-1'))).toBe(false);
  });

  it('delivers an event without an account only to clients holding every account', () => {
    expect(receives(hook('all'), 'zoom.meeting.started', clients, body())).toBe(true);
    expect(receives(hook('one'), 'zoom.meeting.started', clients, body())).toBe(false);
  });

  it('leaves the service’s own events (no source) to every configured client', () => {
    const own = { active: true, ownerClientId: 'none', events: ['bridge.delivery.failed'] };
    expect(receives(own, 'bridge.delivery.failed', clients, { source: null })).toBe(true);
  });
});
