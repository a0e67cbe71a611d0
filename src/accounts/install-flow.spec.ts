import { loadConfig } from '../config/load-config';
import { InstallFlow, codeChallenge, stateHash } from './install-flow.service';

describe('the install flow', () => {
  it('derives the PKCE S256 challenge as RFC 7636 appendix B does', () => {
    expect(codeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('stores a state only as its hash', () => {
    const state = 'q1w2e3r4t5y6';
    expect(stateHash(state)).toMatch(/^[0-9a-f]{64}$/);
    expect(stateHash(state)).not.toContain(state);
    expect(stateHash(state)).toBe(stateHash(state));
  });
});

describe('InstallFlow without the platform app', () => {
  it('answers 503 naming the unset variables, storing nothing', async () => {
    const config = loadConfig({ NODE_ENV: 'test', ZOOM_APP_CLIENT_ID: 'app' });
    const saved: unknown[] = [];
    const store = { saveState: (...args: unknown[]) => saved.push(args) };
    const flow = new InstallFlow(config, store as never, {} as never, {} as never);
    await expect(flow.start('crm')).rejects.toMatchObject({
      status: 503,
      message:
        'Installing platform accounts is not configured: set ZOOM_APP_CLIENT_SECRET, ZOOM_APP_REDIRECT_URL',
    });
    expect(saved).toEqual([]);
  });
});
