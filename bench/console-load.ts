/**
 * The web console's weight and its cold load, in Debian's Chromium against the real app on
 * 127.0.0.1: the built bundle (raw, gzip, brotli) and, over fresh browser profiles (empty
 * cache), the time from navigation to the sign-in form ready for input, and to the Webhooks
 * table filled (a portal link's session, 20 webhooks with their last-hour figures). Baselines
 * from the same run and browser: the service's own Swagger UI (/docs) until its operations
 * show, and a bare JSON page (/health/live) for the floor of a navigation here.
 *
 *   npx ts-node --transpile-only bench/console-load.ts [rounds=10]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../test/support/chromium';
import { ensureConsoleBuilt } from '../test/support/console-build';
import { request } from '../test/support/http';
import { startTestApp } from '../test/support/test-app';
import { helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[rounds=10]');

const ROUNDS = Math.min(Number(process.argv[2] ?? 10), 50);
const BUILT = join(__dirname, '..', 'dist', 'console-app');

function bundle(): { file: string; raw: number; gzip: number; brotli: number }[] {
  const files = ['index.html', ...readdirSync(join(BUILT, 'assets')).map((f) => join('assets', f))];
  return files.map((file) => {
    const bytes = readFileSync(join(BUILT, file));
    return {
      file,
      raw: statSync(join(BUILT, file)).size,
      gzip: gzipSync(bytes).length,
      brotli: brotliCompressSync(bytes).length,
    };
  });
}

/** Milliseconds from navigation start until `ready` holds, in a fresh profile; and bytes fetched. */
async function coldLoad(
  browser: Browser,
  url: string,
  ready: (page: Page) => Promise<unknown>,
): Promise<{ ms: number; bytes: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await ready(page);
    const ms = await page.evaluate<number>('performance.now()');
    const bytes = await page.evaluate<number>(
      "performance.getEntries().filter((e) => 'encodedBodySize' in e)" +
        '.reduce((sum, e) => sum + e.encodedBodySize, 0)',
    );
    return { ms, bytes };
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  ensureConsoleBuilt();
  const files = bundle();
  const total = files.reduce(
    (sum, f) => ({ raw: sum.raw + f.raw, gzip: sum.gzip + f.gzip, brotli: sum.brotli + f.brotli }),
    { raw: 0, gzip: 0, brotli: 0 },
  );
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  process.stdout.write('bundle (dist/console-app):\n');
  for (const f of files) {
    process.stdout.write(
      `  ${f.file.padEnd(32)} ${kb(f.raw).padStart(10)} raw ${kb(f.gzip).padStart(10)} gzip ${kb(f.brotli).padStart(10)} brotli\n`,
    );
  }
  process.stdout.write(
    `  ${'total'.padEnd(32)} ${kb(total.raw).padStart(10)} raw ${kb(total.gzip).padStart(10)} gzip ${kb(total.brotli).padStart(10)} brotli\n`,
  );

  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
  const browser = await launchChromium();
  try {
    const token = await t.token('alpha');
    for (let i = 0; i < 20; i += 1) {
      await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: {
          url: `http://127.0.0.1:9/bench/${i}`,
          events: ['job.started'],
          secret: 'bench-console-secret-0123',
        },
      });
    }
    const link = await request(t.baseUrl, 'POST', '/api/portal-links', { token, body: {} });
    const portal = new URL(link.body.url as string);

    const cases: [string, string, (page: Page) => Promise<unknown>][] = [
      [
        'console: sign-in form ready',
        `${t.baseUrl}/console`,
        (page) => page.getByRole('button', { name: 'Sign in' }).waitFor(),
      ],
      [
        'console: Webhooks table filled (portal link, 20 webhooks)',
        `${t.baseUrl}${portal.pathname}${portal.hash}`,
        (page) =>
          page
            .getByRole('table', { name: 'Webhooks' })
            .locator('tbody tr')
            .nth(19)
            .getByRole('cell', { name: '0', exact: true })
            .first()
            .waitFor(),
      ],
      [
        'baseline: Swagger UI /docs operations shown',
        `${t.baseUrl}/docs`,
        (page) => page.locator('.opblock').first().waitFor(),
      ],
      [
        'baseline: /health/live (bare JSON page)',
        `${t.baseUrl}/health/live`,
        (page) => page.waitForLoadState('load'),
      ],
    ];
    for (const [label, url, ready] of cases) {
      await coldLoad(browser, url, ready); // warm-up: the server's first answers
      const runs: { ms: number; bytes: number }[] = [];
      for (let i = 0; i < ROUNDS; i += 1) runs.push(await coldLoad(browser, url, ready));
      const ms = runs.map((r) => r.ms);
      process.stdout.write(
        `${label.padEnd(58)} median ${percentile(ms, 0.5).toFixed(0).padStart(5)} ms  ` +
          `p90 ${percentile(ms, 0.9).toFixed(0).padStart(5)} ms  ` +
          `fetched ${kb(runs[0].bytes)} (${ROUNDS} cold loads)\n`,
      );
    }
  } finally {
    await browser.close();
    await t.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
