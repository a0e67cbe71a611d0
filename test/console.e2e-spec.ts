import { Browser, BrowserContext, Page } from 'playwright-core';
import { haveChromium, launchChromium } from './support/chromium';
import { ensureConsoleBuilt } from './support/console-build';
import { FakeZoomOAuth } from './support/fake-zoom-oauth';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLIENTS, ClientName, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

const haveBrowser = haveChromium('console browser test');
// A browser test walks through many pages; on a loaded 2-core machine one can outlast Jest's
// default minute without anything being wrong.
jest.setTimeout(180_000);

/** A portal link's URL, pointed at the test app (PUBLIC_BASE_URL names another port). */
const onApp = (t: TestApp, url: string) => {
  const parsed = new URL(url);
  return `${t.baseUrl}${parsed.pathname}${parsed.hash}`;
};

async function signIn(page: Page, t: TestApp, client: ClientName) {
  await page.goto(`${t.baseUrl}/console`);
  await page.getByLabel('Client id').fill(CLIENTS[client].client_id);
  await page.getByLabel('Client secret').fill(CLIENTS[client].client_secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('table', { name: 'Webhooks' }).waitFor();
}

/** The page is no wider than its viewport: nothing but the tables' own boxes scrolls sideways. */
const pageWidth = (page: Page) =>
  page.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );

// Run in the page: the test's TypeScript knows Node's globals, not the browser's, so these are
// source text.
const STORED_SESSION = "sessionStorage.getItem('meb.console.session')";
const FOCUSED_NAME = `(() => {
  const el = document.activeElement;
  if (!el) return '';
  const labelled = el.id ? document.querySelector('label[for="' + el.id + '"]') : null;
  return ((labelled && labelled.textContent) || el.getAttribute('aria-label') || el.textContent || '')
    .trim()
    .replace(/\\s+/g, ' ');
})()`;

/** Presses Tab until the focused element is `name` (a control's label or text); fails after 60. */
async function tabTo(page: Page, name: string) {
  for (let i = 0; i < 60; i += 1) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<string>(FOCUSED_NAME);
    if (focused === name) return;
  }
  throw new Error(`Tab never reached "${name}"`);
}

describe('console: serving and portal links (HTTP)', () => {
  let t: TestApp;
  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('serves the console at /console with a CSP that allows only the service itself, and no framing', async () => {
    const res = await fetch(`${t.baseUrl}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe|https?:|\*/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    // Every script and style is the service's own, under /console/assets.
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThanOrEqual(2);
    for (const source of sources) expect(source).toMatch(/^\/console\/assets\//);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    const asset = await fetch(`${t.baseUrl}${sources[0]}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(asset.headers.get('content-security-policy')).toBe(csp);

    const missing = await request(t.baseUrl, 'GET', '/console/assets/nothing.js');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Not found' });
    const post = await request(t.baseUrl, 'POST', '/console', { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('creates a portal link (webhooks:write): 201 {url, expires_at}, default 3600 s, narrowed scopes', async () => {
    const before = Date.now();
    const res = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('alpha'),
      body: {},
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'url']);
    const url = new URL(res.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${t.config.publicBaseUrl}/console/`);
    expect(url.search).toBe('');
    const token = /^#portal=(.+)$/.exec(url.hash)?.[1] ?? '';
    const expiresAt = Date.parse(res.body.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 3600_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3600_000);
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as {
      exp: number;
      scope: string;
      sub: string;
    };
    expect(claims.exp * 1000).toBe(expiresAt);
    expect(claims).toMatchObject({ sub: 'alpha', scope: 'webhooks:read webhooks:write' });

    // The link's token works for the webhook routes, nothing else, and mints no further links.
    expect((await request(t.baseUrl, 'GET', '/api/webhooks', { token })).status).toBe(200);
    expect((await request(t.baseUrl, 'GET', '/api/users/me', { token })).status).toBe(403);
    const again = await request(t.baseUrl, 'POST', '/api/portal-links', { token, body: {} });
    expect(again.status).toBe(403);
    expect(again.body.message).toMatch(/portal link's session cannot create portal links/);

    const short = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('alpha'),
      body: { ttl_seconds: 60 },
    });
    expect(short.status).toBe(201);
    expect(Date.parse(short.body.expires_at)).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it.each([
    [{ ttl_seconds: 59 }, 'ttl_seconds', 'ttl_seconds must be an integer from 60 to 86400'],
    [{ ttl_seconds: 86401 }, 'ttl_seconds', 'ttl_seconds must be an integer from 60 to 86400'],
    [{ ttl_seconds: '3600' }, 'ttl_seconds', 'ttl_seconds must be an integer from 60 to 86400'],
    [{ ttl_seconds: 90.5 }, 'ttl_seconds', 'ttl_seconds must be an integer from 60 to 86400'],
    [{ scopes: 'x' }, 'scopes', 'property scopes should not exist'],
  ])('refuses %j with 400 naming the field', async (body, field, message) => {
    const res = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('alpha'),
      body,
    });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ field, message }]);
  });

  it('needs webhooks:write and a token', async () => {
    const reader = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('reader'),
      body: {},
    });
    expect(reader.status).toBe(403);
    expect((await request(t.baseUrl, 'POST', '/api/portal-links', { body: {} })).status).toBe(401);
  });

  it('documents POST /api/portal-links with every status and its schema', async () => {
    const doc = (await (await fetch(`${t.baseUrl}/docs-json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
      components: { schemas: Record<string, Json> };
    };
    const op = doc.paths['/api/portal-links'].post;
    expect(Object.keys(op.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '408',
      '409',
      '413',
      '415',
      '503',
    ]);
    for (const response of Object.values(op.responses)) {
      expect(response.content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\//);
    }
    expect(doc.components.schemas.PortalLinkResponse.required.sort()).toEqual([
      'expires_at',
      'url',
    ]);
    expect(doc.components.schemas.CreatePortalLinkDto.properties.ttl_seconds).toMatchObject({
      type: 'integer',
      minimum: 60,
      maximum: 86400,
      default: 3600,
    });
  });
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

describe('console: configuration', () => {
  it('lets only CONSOLE_FRAME_ANCESTORS frame it', async () => {
    ensureConsoleBuilt();
    const t = await startTestApp({
      env: { CONSOLE_FRAME_ANCESTORS: 'https://portal.example.com http://localhost:8080' },
    });
    try {
      const res = await fetch(`${t.baseUrl}/console/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain(
        'frame-ancestors https://portal.example.com http://localhost:8080',
      );
      expect(res.headers.get('x-frame-options')).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('is off with CONSOLE_ENABLED=false: /console is 404 and portal links 409', async () => {
    const t = await startTestApp({ env: { CONSOLE_ENABLED: 'false' } });
    try {
      expect((await fetch(`${t.baseUrl}/console`)).status).toBe(404);
      const link = await request(t.baseUrl, 'POST', '/api/portal-links', {
        token: await t.token('alpha'),
        body: {},
      });
      expect(link.status).toBe(409);
      expect(link.body.message).toMatch(/CONSOLE_ENABLED=false/);
    } finally {
      await t.close();
    }
  });
});

(haveBrowser ? describe : describe.skip)('console in a real browser (Chromium)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const failures: string[] = [];

  /** A fresh profile per test: its own sessionStorage, as a new tab would have. */
  async function freshPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
    await context?.close();
    context = await browser.newContext({ viewport });
    const next = await context.newPage();
    // Anything the CSP refuses or any request elsewhere would show up here.
    next.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
        failures.push(message.text());
      }
    });
    next.on('request', (req) => {
      if (!req.url().startsWith(t.baseUrl)) failures.push(`request to ${req.url()}`);
    });
    return next;
  }

  beforeAll(async () => {
    ensureConsoleBuilt();
    t = await startTestApp();
    receiver = await startReceiver();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await receiver?.close();
    await t?.close();
  });
  beforeEach(async () => {
    page = await freshPage();
  });
  afterEach(() => {
    expect(failures).toEqual([]);
  });

  it("shows the API's message for bad credentials, then signs in with client id and secret", async () => {
    await page.goto(`${t.baseUrl}/console`);
    await page.getByLabel('Client id').fill('alpha');
    await page.getByLabel('Client secret').fill('wrong-secret-0000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Client authentication failed' }).waitFor();

    await page.getByLabel('Client secret').fill(CLIENTS.alpha.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table', { name: 'Webhooks' }).waitFor();
    // The token lives in the tab's sessionStorage, never in a cookie.
    expect(await context.cookies()).toEqual([]);
    const stored = await page.evaluate<string | null>(STORED_SESSION);
    expect(JSON.parse(stored ?? '{}')).toMatchObject({
      clientId: 'alpha',
      scopes: ['webhooks:read', 'webhooks:write'],
      portal: false,
    });
  });

  it("previews a template live, and a chat type's built-in message when it is empty", async () => {
    await signIn(page, t, 'alpha');
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('Events').fill('job.started');
    await page.getByLabel('Destination').selectOption('slack');
    const preview = page.locator('#template-preview');
    await preview.getByText('The built-in message for job.started').waitFor();
    await preview.getByText('"blocks"').waitFor();
    await page.getByLabel('Template').fill('{"text": "Started: " & data.topic}');
    await preview.getByText('"text": "Started: Quarterly all-hands"').waitFor();
    await page.getByLabel('Template').fill('{"text": (1 + }');
    await page.getByRole('alert').filter({ hasText: 'position' }).waitFor();
  });

  it("edits and removes a webhook's template on its page, with the live preview (the built-in message when empty)", async () => {
    const token = await t.token('alpha');
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: {
        url: 'https://hooks.slack.com/services/T0EDIT/B0EDIT/editTokenDDDD',
        events: ['job.started'],
        secret: 'edit-template-secret-0123456789',
        destination: { type: 'slack' },
        template: '{"text": "Started: " & data.topic}',
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const stored = async () =>
      (await request(t.baseUrl, 'GET', `/api/webhooks/${id}`, { token })).body;
    /** The body of the next PATCH the page sends, once `save` has been clicked. */
    const patched = async (save: () => Promise<void>) => {
      const sent = page.waitForRequest((r) => r.method() === 'PATCH');
      await save();
      return (await sent).postDataJSON() as Record<string, unknown>;
    };

    await signIn(page, t, 'alpha');
    await page.goto(`${t.baseUrl}/console/#/webhooks/${id}`);
    const field = page.getByLabel('Template', { exact: true });
    await field.waitFor();
    expect(await field.inputValue()).toBe('{"text": "Started: " & data.topic}');
    const preview = page.locator('#template-preview');
    await preview.getByText('What is sent for job.started').waitFor();
    await preview.getByText('"text": "Started: Quarterly all-hands"').waitFor();

    // A broken template: the preview says where; Save answers the API's 400 and stores nothing.
    await field.fill('{"text": (1 + }');
    await preview.filter({ hasText: 'position' }).waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page
      .locator('[role="alert"]:not(#template-preview)')
      .filter({ hasText: 'template' })
      .waitFor();
    expect((await stored()).template).toBe('{"text": "Started: " & data.topic}');

    // Changed: the preview follows the typing, and Save PATCHes the template (never the masked url).
    await field.fill('{"text": "Now on: " & data.topic}');
    await preview.getByText('"text": "Now on: Quarterly all-hands"').waitFor();
    const change = await patched(() => page.getByRole('button', { name: 'Save' }).click());
    expect(change).toEqual({
      events: ['job.started'],
      template: '{"text": "Now on: " & data.topic}',
    });
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await stored()).toMatchObject({
      template: '{"text": "Now on: " & data.topic}',
      url: created.body.url,
    });

    // Emptied: the preview shows Slack's built-in message, and Save removes the template.
    await field.fill('');
    await preview.getByText('The built-in message for job.started').waitFor();
    await preview.getByText('"blocks"').waitFor();
    const emptied = await patched(() => page.getByRole('button', { name: 'Save' }).click());
    expect(emptied).toEqual({ events: ['job.started'], template: null });
    await waitFor(async () => (await stored()).template === null, { what: 'the template removed' });

    // Set again, then the Remove template button clears it in one step.
    await field.fill('{"text": "Again: " & data.topic}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Remove template' }).click();
    await page.getByRole('status').filter({ hasText: 'Template removed.' }).waitFor();
    expect(await field.inputValue()).toBe('');
    await preview.getByText('The built-in message for job.started').waitFor();
    expect((await stored()).template).toBeNull();
  });

  it("creates a webhook (the API's message on a bad URL), sends a test, follows it live, redelivers and replays", async () => {
    await signIn(page, t, 'alpha');
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('URL').fill('not a url');
    await page.getByLabel('Events').fill('job.started, job.completed');
    await page.getByLabel('Secret').fill('console-secret-0123456789');
    await page.getByRole('button', { name: 'Create' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'url must be an absolute http or https URL' })
      .waitFor();

    const route = receiver.route({}, 'console');
    await page.getByLabel('URL').fill(route.url);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Webhook', exact: true }).waitFor();
    const webhookId = /#\/webhooks\/([0-9a-f-]{36})$/.exec(page.url())?.[1] ?? '';
    expect(webhookId).not.toBe('');
    const deliveries = page.getByRole('table', { name: 'Deliveries' });
    await deliveries.getByText('No deliveries yet.').waitFor();

    // The page stays as it is: the new delivery's row appears by the table's own polling.
    const loads: string[] = [];
    page.on('framenavigated', (frame) => loads.push(frame.url()));
    await page.getByRole('button', { name: 'Send test' }).click();
    await deliveries.getByRole('cell', { name: 'webhook.test' }).waitFor();
    await deliveries.getByText('succeeded').waitFor();
    expect(loads).toEqual([]);
    expect(receiver.requests(route.path)).toHaveLength(1);

    // Filters: a status with no such delivery empties the table; the event filter keeps it.
    await page.getByRole('combobox', { name: 'Status' }).selectOption('failed');
    await deliveries.getByText('No deliveries match the filters.').waitFor();
    await page.getByRole('combobox', { name: 'Status' }).selectOption('');
    await page.getByRole('combobox', { name: 'Event' }).selectOption('webhook.test');
    await deliveries.getByRole('cell', { name: 'webhook.test' }).waitFor();

    // The delivery: its body and its attempts; Redeliver adds an attempt, shown live.
    await deliveries.getByRole('link', { name: /^Delivery / }).click();
    await page.getByRole('heading', { name: 'Delivery', exact: true }).waitFor();
    expect(await page.getByLabel('Body').innerText()).toContain('"event": "webhook.test"');
    const attempts = page.getByRole('table', { name: 'Attempts' });
    await attempts.getByRole('cell', { name: '200', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Redeliver' }).click();
    await waitFor(async () => (await attempts.locator('tbody tr').count()) === 2, {
      what: 'the second attempt in the Attempts table',
    });
    expect(receiver.requests(route.path)).toHaveLength(2);

    // Replay the succeeded deliveries of the last hour: the dialog shows the count queued.
    await page.getByRole('link', { name: 'Back to the webhook' }).click();
    await page.getByRole('button', { name: 'Replay' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay deliveries' });
    await dialog.getByLabel('Since').waitFor();
    await dialog.getByLabel('Status').selectOption('succeeded');
    await dialog.getByLabel('Missed').check();
    await dialog.getByLabel('Until').fill('');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Queued 1 delivery.' }).waitFor();
    await waitFor(() => receiver.requests(route.path).length === 3, { what: 'the replay' });
    await dialog.getByRole('button', { name: 'Close' }).click();

    // Disable, and the list says so; Enable again.
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const row = page.getByRole('table', { name: 'Webhooks' }).getByRole('row').filter({
      hasText: route.url,
    });
    await row.getByRole('cell', { name: 'Disabled' }).waitFor();
    // Three deliveries in the last hour: test, redelivery and replay count as one delivery.
    await row.getByRole('cell', { name: '1', exact: true }).first().waitFor();
  });

  it('finds an event by its id, or says the lookup is unavailable', async () => {
    const token = await t.token('alpha');
    const route = receiver.route({}, 'find');
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: { url: route.url, events: ['job.started'], secret: 'find-secret-0123456789' },
    });
    const test = await request(t.baseUrl, 'POST', `/api/webhooks/${created.body.id}/test`, {
      token,
    });
    const eventId = test.body.event_id as string;
    const lookup = await request(t.baseUrl, 'GET', `/api/events/${eventId}`, { token });

    await signIn(page, t, 'alpha');
    await page.getByRole('link', { name: 'Find event' }).click();
    await page.getByLabel('Event id or tracking id').fill(eventId);
    await page.getByRole('button', { name: 'Find' }).click();
    if (lookup.status === 404 && /^Cannot GET/.test(lookup.body.message)) {
      await page.getByRole('alert').filter({ hasText: 'Event lookup is unavailable' }).waitFor();
    } else {
      await page.getByRole('region', { name: `Event ${eventId}` }).waitFor();
      await page.getByRole('link', { name: `Delivery ${test.body.id}` }).waitFor();
    }
  });

  it('shows the event catalog with each kind, its schema and an example body', async () => {
    await signIn(page, t, 'alpha');
    await page.getByRole('link', { name: 'Event types' }).click();
    const section = page.getByRole('region', { name: 'job.started' });
    await section.waitFor();
    await section.getByText('Example body').click();
    const example = JSON.parse(
      await section.getByLabel('Example body of job.started').innerText(),
    ) as { event: string };
    expect(example.event).toBe('job.started');
    await section.getByText('Schema', { exact: true }).click();
    expect(await section.getByLabel('Schema of job.started').innerText()).toContain('"$schema"');
  });

  it('works at 360 px wide: no page-wide sideways scrolling on any page', async () => {
    const route = receiver.route({}, 'narrow');
    await request(t.baseUrl, 'POST', '/api/webhooks', {
      token: await t.token('alpha'),
      body: { url: route.url, events: ['job.started'], secret: 'narrow-secret-0123456789' },
    });
    page = await freshPage({ width: 360, height: 740 });
    await signIn(page, t, 'alpha');
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: route.url }).click();
    await page.getByRole('table', { name: 'Deliveries' }).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Send test' }).click();
    await page
      .getByRole('link', { name: /^Delivery / })
      .first()
      .click();
    await page.getByRole('table', { name: 'Attempts' }).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: 'Event types' }).click();
    await page.getByRole('region', { name: 'job.started' }).waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
    await page.getByRole('link', { name: 'Find event' }).click();
    await page
      .getByLabel('Event id or tracking id')
      .fill('v=2.0;clid=aw1;rid=WEB_0123456789abcdef');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('alert').or(page.getByRole('status')).first().waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
    await page.goto(`${t.baseUrl}/console/#/webhooks/new`);
    await page.getByLabel('Secret').waitFor();
    expect(await pageWidth(page)).toBeLessThanOrEqual(0);
  });

  it('works with the keyboard alone: sign in, create a webhook, send a test, open the delivery', async () => {
    await page.goto(`${t.baseUrl}/console`);
    await tabTo(page, 'Client id');
    await page.keyboard.type(CLIENTS.alpha.client_id);
    await page.keyboard.press('Tab');
    await page.keyboard.type(CLIENTS.alpha.client_secret);
    await page.keyboard.press('Enter');
    await page.getByRole('table', { name: 'Webhooks' }).waitFor();
    await tabTo(page, 'New webhook');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'New webhook' }).waitFor();
    const route = receiver.route({}, 'keyboard');
    await tabTo(page, 'URL');
    await page.keyboard.type(route.url);
    await tabTo(page, 'Events');
    await page.keyboard.type('job.started');
    await tabTo(page, 'Secret');
    await page.keyboard.type('keyboard-secret-0123456789');
    await tabTo(page, 'Create');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Webhook', exact: true }).waitFor();
    await tabTo(page, 'Send test');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: /^Delivery / }).waitFor();
    const link = page.getByRole('link', { name: /^Delivery / });
    await tabTo(page, (await link.getAttribute('aria-label')) ?? '');
    await page.keyboard.press('Enter');
    await page.getByRole('table', { name: 'Attempts' }).waitFor();
    // The Replay dialog opens, takes focus, and Escape closes it.
    await page.goBack();
    await tabTo(page, 'Replay');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Replay deliveries' });
    await dialog.waitFor();
    expect(await page.evaluate<boolean>("!!document.activeElement?.closest('dialog')")).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(receiver.requests(route.path)).toHaveLength(1);
  });

  it('signs in through a portal link without a secret; the link leaves the address bar and expires', async () => {
    const link = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('alpha'),
      body: { ttl_seconds: 120 },
    });
    expect(link.status).toBe(201);
    await page.clock.install();
    await page.goto(onApp(t, link.body.url));
    await page.getByRole('table', { name: 'Webhooks' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/webhooks');
    await page.getByText('alpha (portal link)').waitFor();
    expect(await page.getByLabel('Client secret').count()).toBe(0);

    // Past its expiry the console signs out by itself (the service refuses the token too).
    await page.clock.fastForward('02:01');
    await page.getByRole('status').filter({ hasText: 'This portal link has expired' }).waitFor();
    await page.getByLabel('Client secret').waitFor();
    expect(await page.evaluate<string | null>(STORED_SESSION)).toBeNull();
  });

  it('refuses an expired portal link at the door', async () => {
    const link = await request(t.baseUrl, 'POST', '/api/portal-links', {
      token: await t.token('alpha'),
      body: { ttl_seconds: 60 },
    });
    await page.clock.install({ time: Date.now() + 61_000 });
    await page.goto(onApp(t, link.body.url));
    await page.getByRole('status').filter({ hasText: 'This portal link has expired' }).waitFor();
    expect(new URL(page.url()).hash).not.toContain('portal=');
  });

  it('lets a read-only client look but not create', async () => {
    await signIn(page, t, 'reader');
    await page.getByText('Read-only: this sign-in lacks webhooks:write.').waitFor();
    expect(await page.getByRole('button', { name: 'New webhook' }).count()).toBe(0);
    // Even on the form itself, the API refuses, and the console says why.
    await page.goto(`${t.baseUrl}/console/#/webhooks/new`);
    await page.getByLabel('URL').fill(receiver.route({}, 'reader').url);
    await page.getByLabel('Events').fill('job.started');
    await page.getByLabel('Secret').fill('reader-secret-0123456789');
    await page.getByRole('button', { name: 'Create' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The token lacks scope webhooks:write' })
      .waitFor();
    const list = await request(t.baseUrl, 'GET', '/api/webhooks', {
      token: await t.token('reader'),
    });
    expect(list.body.data).toEqual([]);
  });
});

(haveBrowser ? describe : describe.skip)('console: platform accounts (Chromium)', () => {
  const REDIRECT_URL = 'http://bridge.test/zoom/oauth/callback';
  let fake: FakeZoomOAuth;
  let t: TestApp;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ensureConsoleBuilt();
    fake = await new FakeZoomOAuth().start();
    t = await startTestApp({
      env: {
        ZOOM_OAUTH_URL: fake.baseUrl,
        ZOOM_API_URL: `${fake.baseUrl}/v2`,
        ZOOM_APP_CLIENT_ID: fake.clientId,
        ZOOM_APP_CLIENT_SECRET: fake.clientSecret,
        ZOOM_APP_REDIRECT_URL: REDIRECT_URL,
      },
    });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  it('lists installed accounts with their status, starts an install and removes one', async () => {
    await signIn(page, t, 'admin');
    await page.getByRole('link', { name: 'Accounts' }).click();
    await page.getByText('No platform account installed yet.').waitFor();
    await page.getByRole('button', { name: 'Install an account' }).click();
    const installUrl = await page
      .getByRole('link', { name: "the platform's install page" })
      .getAttribute('href');
    expect(installUrl).toContain(`${fake.baseUrl}/oauth/authorize?`);
    // The account's administrator at the platform, then back at the bridge's callback.
    const callback = await fake.authorize(installUrl as string, 'acct-console');
    const done = await fetch(callback.replace(new URL(REDIRECT_URL).origin, t.baseUrl));
    expect(done.status).toBe(200);
    await page.reload();
    const table = page.getByRole('table', { name: 'Platform accounts' });
    const row = table.getByRole('row').filter({ hasText: 'acct-console' });
    await row.getByText('active', { exact: true }).waitFor();
    expect(await row.innerText()).toContain('admin');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove acct-console' }).click();
    await page.getByText('Platform account acct-console removed.').waitFor();
    await row.getByText('revoked', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Remove acct-console' }).count()).toBe(0);
  });
});
