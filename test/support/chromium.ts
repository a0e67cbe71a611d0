import { Browser, chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_PATH, have } from './prerequisites';

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

/** Whether a browser suite can run (test/support/prerequisites.ts: skipped, or failed in CI). */
export function haveChromium(suite: string): boolean {
  return have(CHROMIUM, suite);
}

/** Headless Debian Chromium (.ci/run installs the package; never a browser download); playwright-core gives each context a fresh profile. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
