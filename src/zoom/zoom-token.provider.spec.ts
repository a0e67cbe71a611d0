import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeZoom } from '../../test/support/fake-zoom';
import { loadConfig } from '../config/load-config';
import { ZoomApiError } from './zoom-error';
import { ZoomHttp } from './zoom-http';
import {
  TOKEN_MAX_REUSE_MS,
  TOKEN_MIN_REUSE_MS,
  TOKEN_RENEW_MARGIN_MS,
  ZoomTokenProvider,
} from './zoom-token.provider';

describe('ZoomTokenProvider (against the fake platform)', () => {
  let fake: FakeZoom;
  const https: ZoomHttp[] = [];

  const provider = (env: Record<string, string> = {}) => {
    const config = loadConfig({ ...fake.env(), ZOOM_TIMEOUT_MS: '1000', ...env });
    const http = new ZoomHttp(config);
    https.push(http);
    return new ZoomTokenProvider(config, http);
  };

  beforeAll(async () => {
    fake = await FakeZoom.start();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    fake.regionPath = '/regional';
  });
  afterAll(async () => {
    await Promise.all(https.map((h) => h.onApplicationShutdown()));
    await fake.close();
  });

  it('shares one token request among any number of concurrent callers', async () => {
    const tokens = provider();
    const before = fake.tokenRequests;
    const got = await Promise.all(Array.from({ length: 50 }, () => tokens.get()));
    expect(fake.tokenRequests).toBe(before + 1);
    expect(new Set(got).size).toBe(1);
    expect(got[0].accessToken).toMatch(/\S{20,}/);
  });

  it(`keeps the token until ${TOKEN_RENEW_MARGIN_MS / 1000} s before it expires`, async () => {
    const tokens = provider();
    const t0 = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(t0);
    const first = await tokens.get();
    expect(first.expiresAt).toBe(t0 + fake.tokenTtlSeconds * 1000);
    const before = fake.tokenRequests;

    clock.mockReturnValue(first.expiresAt - TOKEN_RENEW_MARGIN_MS - 1);
    expect(await tokens.get()).toBe(first);
    expect(fake.tokenRequests).toBe(before);

    clock.mockReturnValue(first.expiresAt - TOKEN_RENEW_MARGIN_MS);
    const second = await tokens.get();
    expect(second).not.toBe(first);
    expect(fake.tokenRequests).toBe(before + 1);
  });

  it.each([30, 1, 0.001])(
    'renews a token at most once a minute however short its expires_in (%s s)',
    async (ttl) => {
      fake.tokenTtlSeconds = ttl;
      try {
        const tokens = provider();
        const t0 = Date.now();
        const clock = jest.spyOn(Date, 'now').mockReturnValue(t0);
        const first = await tokens.get();
        const before = fake.tokenRequests;
        clock.mockReturnValue(t0 + TOKEN_MIN_REUSE_MS - 1);
        expect(await tokens.get()).toBe(first);
        expect(fake.tokenRequests).toBe(before);
        clock.mockReturnValue(t0 + TOKEN_MIN_REUSE_MS);
        expect(await tokens.get()).not.toBe(first);
        expect(fake.tokenRequests).toBe(before + 1);
      } finally {
        fake.tokenTtlSeconds = 3599;
      }
    },
  );

  it('renews a token with a lifetime past what a timer holds within a day', async () => {
    fake.tokenTtlSeconds = 3e6;
    try {
      const tokens = provider();
      const t0 = Date.now();
      jest.spyOn(Date, 'now').mockReturnValue(t0);
      const token = await tokens.get();
      // The platform's word is kept; only its use is bounded.
      expect(token.expiresAt).toBe(t0 + 3e9);
      expect(token.renewAt).toBe(t0 + TOKEN_MAX_REUSE_MS);
    } finally {
      fake.tokenTtlSeconds = 3599;
    }
  });

  it('forgets a refused token once, and ignores refusals of older tokens', async () => {
    const tokens = provider();
    const old = await tokens.get();
    tokens.invalidate(old);
    const renewed = await tokens.get();
    expect(renewed).not.toBe(old);
    tokens.invalidate(old); // a late caller still holding the old token
    expect(await tokens.get()).toBe(renewed);
  });

  it("uses the token's api_url + /v2, else ZOOM_API_URL", async () => {
    expect((await provider().get()).apiBaseUrl).toBe(`${fake.baseUrl}/regional/v2`);
    fake.regionPath = '/eu01/v2/';
    expect((await provider().get()).apiBaseUrl).toBe(`${fake.baseUrl}/eu01/v2`);
    fake.regionPath = null;
    expect((await provider().get()).apiBaseUrl).toBe(`${fake.baseUrl}/global/v2`);
  });

  it('answers 502 when the platform refuses the credentials, naming its reason', async () => {
    const error = await provider({ ZOOM_CLIENT_SECRET: 'wrong' })
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ZoomApiError);
    expect((error as ZoomApiError).getStatus()).toBe(502);
    expect((error as ZoomApiError).message).toContain('Invalid client_id or client_secret');
    expect((error as ZoomApiError).extra.upstream).toMatchObject({
      status: 401,
      code: null,
      message: 'invalid_client: Invalid client_id or client_secret',
    });
  });

  it('tries again on the next call after a failed request', async () => {
    const tokens = provider();
    fake.resetNext(1, (r) => r.rawPath === '/oauth/token');
    await expect(tokens.get()).rejects.toMatchObject({ failure: 'unreachable' });
    await expect(tokens.get()).resolves.toMatchObject({ accessToken: expect.any(String) });
  });

  it('answers 503 naming the unset variables, without asking the platform', async () => {
    const before = fake.tokenRequests;
    const config = loadConfig({ ZOOM_OAUTH_URL: fake.baseUrl });
    const http = new ZoomHttp(config);
    https.push(http);
    const error = (await new ZoomTokenProvider(config, http)
      .get()
      .catch((e: unknown) => e)) as ZoomApiError;
    expect(error.getStatus()).toBe(503);
    expect(error.message).toBe(
      'The meeting platform is not configured: set ZOOM_ACCOUNT_ID, ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET',
    );
    expect(fake.tokenRequests).toBe(before);
  });

  it.each([
    [{ token_type: 'bearer', expires_in: 3599 }, 'without access_token'],
    [{ access_token: 'x', expires_in: 'soon' }, 'without expires_in'],
  ])('answers 502 for a token answer %j', async (answer, message) => {
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const error = (await provider({ ZOOM_OAUTH_URL: `http://127.0.0.1:${port}` })
        .get()
        .catch((e: unknown) => e)) as ZoomApiError;
      expect(error.getStatus()).toBe(502);
      expect(error.message).toContain(message);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
