/**
 * `npm run screenshots:console`: the pictures of docs/console.md, taken from the real console
 * in Debian's Chromium (the same launch as the browser tests), against a service started here
 * with a database of its own, a local receiver and a few signed platform events. Needs
 * PostgreSQL and Redis as the tests do, and a built console (`npm run build:console`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { meetingStarted, meetingUuid, participantJoined } from './platform/zoom-events';
import { launchChromium } from '../test/support/chromium';
import { ensureConsoleBuilt } from '../test/support/console-build';
import { request } from '../test/support/http';
import { startReceiver } from '../test/support/receiver';
import { CLIENTS, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { sendZoomEvent } from '../test/support/zoom-sender';

const OUT = join(__dirname, '..', 'docs', 'console');

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  ensureConsoleBuilt();
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn', DELIVERY_MAX_RETRIES: '1' } });
  const receiver = await startReceiver();
  const browser = await launchChromium();
  try {
    const token = await t.token('alpha');
    const ok = receiver.route({}, 'orders');
    const flaky = receiver.route({ statuses: [500, 200], body: 'upstream timeout' }, 'crm');
    const create = (url: string, events: string[], secret: string) =>
      request(t.baseUrl, 'POST', '/api/webhooks', { token, body: { url, events, secret } });
    const main = (
      await create(ok.url, ['job.started', 'follower.gained'], 'whsec_c2NyZWVuc2hvdHMtb3JkZXJz')
    ).body as { id: string };
    await create(flaky.url, ['job.started', 'job.completed'], 'screenshots-crm-secret-0123');
    const gone = receiver.route({ statuses: [410] }, 'legacy');
    const legacy = (await create(gone.url, ['zoom.*'], 'screenshots-legacy-secret-01')).body as {
      id: string;
    };
    await request(t.baseUrl, 'POST', `/api/webhooks/${legacy.id}/test`, { token });
    for (let i = 0; i < 3; i += 1) {
      const uuid = meetingUuid();
      await sendZoomEvent(t.baseUrl, meetingStarted(uuid));
      await sendZoomEvent(t.baseUrl, participantJoined(uuid));
    }
    await request(t.baseUrl, 'POST', `/api/webhooks/${main.id}/test`, { token });
    await waitFor(() => receiver.requests(ok.path).length >= 7, { what: 'the deliveries' });

    const shoot = async (page: Page, name: string) => {
      await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
      process.stdout.write(`docs/console/${name}.png\n`);
    };
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${t.baseUrl}/console`);
    await page.getByLabel('Client id').fill(CLIENTS.alpha.client_id);
    await shoot(page, 'sign-in');
    await page.getByLabel('Client secret').fill(CLIENTS.alpha.client_secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const table = page.getByRole('table', { name: 'Webhooks' });
    await table.getByText('Disabled: the receiver answered 410 Gone').waitFor();
    await shoot(page, 'webhooks');

    await table.getByRole('link', { name: ok.url }).click();
    await page.getByRole('table', { name: 'Deliveries' }).getByText('webhook.test').waitFor();
    await shoot(page, 'webhook');

    await page.getByRole('button', { name: 'Replay' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay deliveries' });
    await dialog.getByRole('combobox', { name: 'Status' }).selectOption('succeeded');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    await dialog.getByRole('status').waitFor();
    await shoot(page, 'replay');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page
      .getByRole('link', { name: /^Delivery / })
      .last()
      .click();
    await page
      .getByRole('table', { name: 'Attempts' })
      .getByRole('cell', { name: '200' })
      .first()
      .waitFor();
    await shoot(page, 'delivery');

    await page.getByRole('link', { name: 'Event types' }).click();
    const started = page.getByRole('region', { name: 'job.started' });
    await started.getByText('Example body').click();
    await shoot(page, 'event-types');

    await page.getByRole('link', { name: 'Find event' }).click();
    await page.getByLabel('Event id or tracking id').fill('9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('alert').or(page.getByRole('status')).first().waitFor();
    await shoot(page, 'find-event');

    const narrow = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const phone = await narrow.newPage();
    const link = await request(t.baseUrl, 'POST', '/api/portal-links', { token, body: {} });
    const url = new URL(link.body.url as string);
    await phone.goto(`${t.baseUrl}${url.pathname}${url.hash}`);
    await phone.getByRole('table', { name: 'Webhooks' }).getByRole('link').first().waitFor();
    await shoot(phone, 'webhooks-360px');
  } finally {
    await browser.close();
    await receiver.close();
    await t.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
