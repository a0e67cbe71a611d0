import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLIENTS, ClientName, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

const basic = (client: ClientName, secret: string = CLIENTS[client].client_secret) =>
  `Basic ${Buffer.from(`${CLIENTS[client].client_id}:${secret}`).toString('base64')}`;

interface DashboardQueue {
  name: string;
  counts: Record<string, number>;
  jobs: { id: string; data: { deliveryIds?: string[] } }[];
}

describe('queue dashboard (/admin/queues)', () => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    // Failed attempts wait 10 minutes, so a delivery to a failing receiver stays delayed.
    t = await startTestApp({ env: { DELIVERY_BACKOFF_MS: '600000' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('asks a browser for credentials: 401 with a Basic challenge and the error shape', async () => {
    const res = await request(t.baseUrl, 'GET', '/admin/queues');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(res.body).toEqual({
      statusCode: 401,
      error: 'Unauthorized',
      message: 'Client credentials or a bearer token required',
    });
  });

  it('refuses a wrong secret with 401, and a client without queues:admin with 403', async () => {
    const wrong = await request(t.baseUrl, 'GET', '/admin/queues', {
      headers: { authorization: basic('operator', 'not-the-secret-0000') },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('Client authentication failed');

    const alpha = await request(t.baseUrl, 'GET', '/admin/queues', {
      headers: { authorization: basic('alpha') },
    });
    expect(alpha.status).toBe(403);
    // Basic credentials name a client, not a token: the message says whose scope is missing.
    expect(alpha.body).toEqual({
      statusCode: 403,
      error: 'Forbidden',
      message: 'Client "alpha" lacks scope queues:admin',
    });

    const alphaToken = await request(t.baseUrl, 'GET', '/admin/queues/api/queues', {
      token: await t.token('alpha'),
    });
    expect(alphaToken.status).toBe(403);
    expect(alphaToken.body.message).toBe('The token lacks scope queues:admin');

    const forged = await request(t.baseUrl, 'GET', '/admin/queues/api/queues', {
      token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcGVyYXRvciJ9.forged',
    });
    expect(forged.status).toBe(401);
  });

  it('serves the dashboard page to the operator with Basic credentials', async () => {
    const res = await request(t.baseUrl, 'GET', '/admin/queues', {
      headers: { authorization: basic('operator') },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('Meeting Event Bridge');
    expect(res.text).toContain('<base href="/admin/queues/" />');
    // Its scripts load from under the same path, behind the same check.
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(res.text)?.[1];
    expect(script).toBeDefined();
    const asset = `/admin/queues/${script}`;
    expect((await request(t.baseUrl, 'GET', asset)).status).toBe(401);
    const loaded = await request(t.baseUrl, 'GET', asset, {
      headers: { authorization: basic('operator') },
    });
    expect(loaded.status).toBe(200);
    expect(loaded.headers.get('content-type')).toMatch(/javascript/);
  });

  it('lists every queue and shows a delayed retry with its delivery id', async () => {
    const route = receiver.route({ statuses: [500] });
    const webhook = await createWebhook(t, { url: route.url });
    const test = await request(t.baseUrl, 'POST', `/api/webhooks/${webhook.id}/test`, {
      token: await t.token('alpha'),
    });
    expect(test.status).toBe(202);
    const deliveryId = test.body.id as string;

    const token = await t.token('operator');
    const deliveries = await waitFor(
      async () => {
        const res = await request(
          t.baseUrl,
          'GET',
          '/admin/queues/api/queues?activeQueue=deliveries&status=delayed&page=1&jobsPerPage=50',
          { token },
        );
        const queue = (res.body?.queues as DashboardQueue[] | undefined)?.find(
          (q) => q.name === 'deliveries',
        );
        const retry = queue?.jobs.find((job) => job.data.deliveryIds?.includes(deliveryId));
        // The dashboard counts a queue's jobs before it lists them: an answer read as the
        // failed attempt moved its job to delayed lists it there with a count from before.
        return queue && retry && queue.counts.delayed >= 1 && { res, queue };
      },
      { what: 'the delivery as a delayed job in the dashboard, and counted there' },
    );
    expect(deliveries.res.status).toBe(200);
    expect((deliveries.res.body.queues as DashboardQueue[]).map((q) => q.name).sort()).toEqual([
      'deliveries',
      'inbound',
      'recordings',
    ]);
  });

  it('may not be framed by another site, whatever the answer', async () => {
    const page = await request(t.baseUrl, 'GET', '/admin/queues', {
      headers: { authorization: basic('operator') },
    });
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(page.text)?.[1];
    const answers = [
      page,
      await request(t.baseUrl, 'GET', `/admin/queues/${script}`, {
        headers: { authorization: basic('operator') },
      }),
      await request(t.baseUrl, 'GET', '/admin/queues/api/queues', {
        token: await t.token('operator'),
      }),
      await request(t.baseUrl, 'GET', '/admin/queues'),
      await request(t.baseUrl, 'GET', '/admin/queues', {
        headers: { authorization: basic('alpha') },
      }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 401, 403]);
    for (const res of answers) {
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    }
  });

  it('sends no X-Powered-By, on the dashboard (an Express app of its own) or anywhere else', async () => {
    const operator = { authorization: basic('operator') };
    const answers = [
      await request(t.baseUrl, 'GET', '/admin/queues', { headers: operator }),
      await request(t.baseUrl, 'GET', '/admin/queues/api/queues', { headers: operator }),
      await request(t.baseUrl, 'GET', '/admin/queues/queue/deliveries', { headers: operator }),
      await request(t.baseUrl, 'GET', '/admin/queues'),
      await request(t.baseUrl, 'GET', '/health/live'),
      await request(t.baseUrl, 'POST', '/oauth/token', { body: {} }),
      await request(t.baseUrl, 'GET', '/api/webhooks', { token: await t.token('alpha') }),
      await request(t.baseUrl, 'GET', '/docs'),
      await request(t.baseUrl, 'GET', '/no-such-route'),
    ];
    // The first three come from bull-board itself, which sent the header before.
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 401, 200, 400, 200, 200, 404]);
    for (const res of answers) expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('takes changes only from its own origin (cached Basic credentials cannot be ridden)', async () => {
    const path = '/admin/queues/api/queues/deliveries/retry/failed';
    const crossSite = await request(t.baseUrl, 'PUT', path, {
      headers: { authorization: basic('operator'), origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.message).toMatch(/cross-origin/);
    const fetchMetadata = await request(t.baseUrl, 'PUT', path, {
      headers: { authorization: basic('operator'), 'sec-fetch-site': 'cross-site' },
    });
    expect(fetchMetadata.status).toBe(403);

    const sameSite = await request(t.baseUrl, 'PUT', path, {
      headers: { authorization: basic('operator'), origin: t.baseUrl },
    });
    expect(sameSite.status).toBe(200);
  });

  it('limits failed Basic attempts like the token endpoint: 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await request(t.baseUrl, 'GET', '/admin/queues', {
        headers: { authorization: basic('reader', `guess-number-${i}-000000`) },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    const blocked = await request(t.baseUrl, 'GET', '/admin/queues', {
      headers: { authorization: basic('reader') },
    });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('queue dashboard in the worker role', () => {
  it('is not served (a worker serves only health and metrics)', async () => {
    const t = await startTestApp({ env: { APP_ROLE: 'worker' } });
    try {
      const res = await request(t.baseUrl, 'GET', '/admin/queues', {
        headers: { authorization: basic('operator') },
      });
      expect(res.status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
