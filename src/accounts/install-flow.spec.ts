import { codeChallenge, stateHash } from './install-flow.service';

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
