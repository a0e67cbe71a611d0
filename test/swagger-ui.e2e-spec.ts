import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { haveChromium, launchChromium } from './support/chromium';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';

/** Screenshots land here; CI keeps reports/ as the run's artifacts. */
const ARTIFACTS = join(__dirname, '..', 'reports', 'swagger-ui');

const haveBrowser = haveChromium('swagger-ui browser test');

/** Opens an operation of the webhooks tag, presses "Try it out" and returns its block. */
async function tryItOut(page: Page, operationId: string) {
  const block = page.locator(`#operations-webhooks-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('button.try-out__btn').click();
  return block;
}

/** Presses Execute and returns the HTTP status the page received and the one it shows. */
async function execute(page: Page, block: ReturnType<Page['locator']>, method: string) {
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/webhooks' && r.request().method() === method,
    ),
    block.locator('button.execute').click(),
  ]);
  const shown = block.locator('.live-responses-table .response .response-col_status').first();
  await shown.waitFor();
  return { status: response.status(), shown: (await shown.innerText()).trim(), response };
}

(haveBrowser ? describe : describe.skip)('Swagger UI in a real browser (Chromium)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp();
    receiver = await startReceiver();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });

  it('authorizes with client credentials, then creates and lists a webhook with "Try it out"', async () => {
    await page.goto(`${t.baseUrl}/docs`);
    await page.locator('#operations-webhooks-WebhooksController_create').waitFor();

    // Authorize: the oauth2 client-credentials form, narrowed to the webhook scopes.
    await page.locator('.auth-wrapper button.authorize').click();
    const oauth = page
      .locator('.modal-ux .auth-container')
      .filter({ hasText: 'clientCredentials' });
    await oauth.locator('#client_id_clientCredentials').fill(CLIENTS.alpha.client_id);
    await oauth.locator('#client_secret_clientCredentials').fill(CLIENTS.alpha.client_secret);
    for (const scope of ['webhooks:read', 'webhooks:write']) {
      await oauth.locator(`label[for="${scope}-clientCredentials-checkbox-oauth2"]`).click();
    }
    const [token] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === '/oauth/token'),
      oauth.getByRole('button', { name: 'Apply given OAuth2 credentials' }).click(),
    ]);
    expect(token.status()).toBe(200);
    expect(((await token.json()) as { scope: string }).scope).toBe('webhooks:read webhooks:write');
    await oauth.getByRole('button', { name: 'Remove authorization' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, '1-authorized.png') });
    await oauth.getByRole('button', { name: 'Close' }).click();

    // POST /api/webhooks with the example body, its URL pointed at a local receiver.
    const route = receiver.route();
    const create = await tryItOut(page, 'WebhooksController_create');
    const body = create.locator('textarea.body-param__text');
    const example = JSON.parse(await body.inputValue()) as Record<string, unknown>;
    // The example shows the optional fields too; sent as it is (with our URL), it must be valid.
    expect(Object.keys(example)).toEqual(expect.arrayContaining(['events', 'secret', 'url']));
    await body.fill(JSON.stringify({ ...example, url: route.url }, null, 2));
    const created = await execute(page, create, 'POST');
    expect(created.status).toBe(201);
    expect(created.shown).toBe('201');
    expect(created.response.request().headers().authorization).toMatch(/^Bearer /);
    const webhook = (await created.response.json()) as { id: string; url: string };
    expect(webhook.url).toBe(route.url);
    await create.screenshot({ path: join(ARTIFACTS, '2-post-webhooks.png') });

    // GET /api/webhooks lists it.
    const list = await tryItOut(page, 'WebhooksController_list');
    const listed = await execute(page, list, 'GET');
    expect(listed.status).toBe(200);
    expect(listed.shown).toBe('200');
    expect(new URL(listed.response.url()).searchParams.has('cursor')).toBe(false);
    const page1 = (await listed.response.json()) as { data: { id: string }[] };
    expect(page1.data.map((w) => w.id)).toContain(webhook.id);
    await expect(list.locator('.live-responses-table').innerText()).resolves.toContain(webhook.id);
    await page.screenshot({ path: join(ARTIFACTS, '3-try-it-out.png'), fullPage: true });

    // The browser's webhook is the client's own, as the API sees it.
    const own = await request(t.baseUrl, 'GET', `/api/webhooks/${webhook.id}`, {
      token: await t.token('alpha'),
    });
    expect(own.status).toBe(200);
    for (const shot of ['1-authorized.png', '2-post-webhooks.png', '3-try-it-out.png']) {
      expect(statSync(join(ARTIFACTS, shot)).size).toBeGreaterThan(10_000);
    }
  });
});

describe('OpenAPI document: what "Try it out" pre-fills', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('offers in Authorize exactly the scopes the documented routes take, so "select all" works', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/docs-json`)).json()) as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
      components: {
        securitySchemes: { oauth2: { flows: { clientCredentials: { scopes: object } } } };
      };
    };
    const used = new Set(
      Object.values(doc.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) => (op.security ?? []).flatMap((s) => s.oauth2 ?? [])),
      ),
    );
    const offered = Object.keys(
      doc.components.securitySchemes.oauth2.flows.clientCredentials.scopes,
    );
    expect(offered.sort()).toEqual([...used].sort());
    expect(offered).not.toContain('queues:admin');
    // A client holding every scope (the operator's too) gets a token for all of them at once.
    const res = await fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: CLIENTS.admin.client_id,
        client_secret: CLIENTS.admin.client_secret,
        scope: offered.join(' '),
      }),
    });
    expect(res.status).toBe(200);
  });

  it('gives no example to a page token, which Swagger UI would send and so skip page one', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/docs-json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
    };
    const tokens = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).flatMap(([method, op]) =>
        (op.parameters ?? [])
          .filter((p) => p.in === 'query' && /cursor|page_token/.test(p.name))
          .map((p) => ({ route: `${method.toUpperCase()} ${path}`, ...p })),
      ),
    );
    expect(tokens.map((p) => p.route)).toEqual(
      expect.arrayContaining([
        'GET /api/users',
        'GET /api/users/{userId}/meetings',
        'GET /api/users/{userId}/recordings',
        'GET /api/webhooks',
        'GET /api/webhooks/{id}/deliveries',
      ]),
    );
    for (const p of tokens) {
      expect({ route: p.route, example: p.example ?? p.schema?.example }).toEqual({
        route: p.route,
        example: undefined,
      });
    }
  });
});

interface Parameter {
  in: string;
  name: string;
  example?: unknown;
  schema?: { example?: unknown };
}
