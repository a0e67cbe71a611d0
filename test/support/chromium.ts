import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';

/** Debian's Chromium: CI installs the package (.ci/run); never a browser download. */
export const CHROMIUM = '/usr/bin/chromium';

// The machine has no route out: without these Chromium keeps dialling Google's services.
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether a browser suite can run. .ci/run installs Debian's Chromium and sets CI, so there a
 * missing browser is a failure; on a developer machine without it the suite is skipped with
 * a notice instead of failing `npm test`.
 */
export function haveChromium(suite: string): boolean {
  const have = existsSync(CHROMIUM);
  if (!have && process.env.CI) {
    throw new Error(`${CHROMIUM} is missing: .ci/run installs the Debian package chromium`);
  }
  if (!have) {
    process.stderr.write(`${suite} skipped: no ${CHROMIUM} (apt-get install chromium)\n`);
  }
  return have;
}

/** Headless Chromium; playwright-core gives each context a fresh profile. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
