import { FakeZoomOAuth } from '../../test/support/fake-zoom-oauth';
import { loadConfig } from '../config/load-config';
import { TOKEN_MAX_REUSE_MS, TOKEN_MIN_REUSE_MS } from '../zoom/zoom-token.provider';
import { ZoomHttp } from '../zoom/zoom-http';
import { codeChallenge } from './install-flow.service';
import { PlatformOAuthClient } from './platform-oauth.client';

const REDIRECT = 'http://bridge.test/zoom/oauth/callback';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

describe('PlatformOAuthClient (against the fake platform)', () => {
  let fake: FakeZoomOAuth;
  let http: ZoomHttp;
  let oauth: PlatformOAuthClient;

  /** A code of `accountId`, as the installing person's browser brings it back. */
  const code = async (accountId: string): Promise<string> => {
    const url = new URL(`${fake.baseUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: fake.clientId,
      redirect_uri: REDIRECT,
      state: 's',
      code_challenge: codeChallenge(VERIFIER),
      code_challenge_method: 'S256',
    }).toString();
    return new URL(await fake.authorize(url.href, accountId)).searchParams.get('code') as string;
  };

  beforeAll(async () => {
    fake = await new FakeZoomOAuth().start();
    const config = loadConfig({
      NODE_ENV: 'test',
      ZOOM_OAUTH_URL: fake.baseUrl,
      ZOOM_API_URL: `${fake.baseUrl}/v2`,
      ZOOM_APP_CLIENT_ID: fake.clientId,
      ZOOM_APP_CLIENT_SECRET: fake.clientSecret,
      ZOOM_APP_REDIRECT_URL: REDIRECT,
      ZOOM_TIMEOUT_MS: '2000',
    });
    http = new ZoomHttp(config);
    oauth = new PlatformOAuthClient(config, http);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    fake.expiresIn = 3599;
  });
  afterAll(async () => {
    await http.onApplicationShutdown();
    await fake.close();
  });

  it.each([30, 1])(
    'keeps an account token a minute however short its expires_in (%s s), on install and renewal',
    async (ttl) => {
      fake.expiresIn = ttl;
      const t0 = Date.now();
      jest.spyOn(Date, 'now').mockReturnValue(t0);
      const installed = await oauth.exchangeCode(await code(`acct-short-${ttl}`), VERIFIER);
      // The platform's word is kept; only its use is bounded.
      expect(installed.expiresAt).toBe(t0 + ttl * 1000);
      expect(installed.renewAt).toBe(t0 + TOKEN_MIN_REUSE_MS);
      const renewed = await oauth.renew(installed.refreshToken);
      expect(renewed.renewAt).toBe(t0 + TOKEN_MIN_REUSE_MS);
    },
  );

  it('renews an account token with a lifetime past what a timer holds within a day', async () => {
    fake.expiresIn = 3e6;
    const t0 = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(t0);
    const set = await oauth.exchangeCode(await code('acct-long'), VERIFIER);
    expect(set.expiresAt).toBe(t0 + 3e9);
    expect(set.renewAt).toBe(t0 + TOKEN_MAX_REUSE_MS);
  });

  it('renews an hour-long token 60 s before it expires', async () => {
    const t0 = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(t0);
    const set = await oauth.exchangeCode(await code('acct-hour'), VERIFIER);
    expect(set.renewAt).toBe(t0 + 3599_000 - 60_000);
  });
});
