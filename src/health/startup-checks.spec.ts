import { loadConfig } from '../config/load-config';
import { configWarnings } from './startup-checks';

const CLIENT = JSON.stringify([
  { client_id: 'crm', client_secret: 's'.repeat(32), scopes: 'webhooks:read' },
]);

describe('configWarnings', () => {
  const warnings = (env: Record<string, string>) => configWarnings(loadConfig(env));

  it('warns an API process with no client that every token request is refused', () => {
    expect(warnings({ APP_ROLE: 'api' })).toEqual([
      expect.stringMatching(
        /^No API client is configured \(AUTH_CLIENTS is empty\): POST \/oauth\/token/,
      ),
    ]);
  });

  it('warns a worker with no client that it delivers nothing', () => {
    expect(warnings({ APP_ROLE: 'worker' })).toEqual([
      expect.stringMatching(/on this worker: .* delivers nothing/),
    ]);
  });

  it('says nothing once clients are configured, on either role', () => {
    expect(warnings({ APP_ROLE: 'api', AUTH_CLIENTS: CLIENT })).toEqual([]);
    expect(warnings({ APP_ROLE: 'worker', AUTH_CLIENTS: CLIENT })).toEqual([]);
  });
});
