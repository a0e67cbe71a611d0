import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pino } from 'pino';

const ROOT = join(__dirname, '..');
const SOURCES = join(ROOT, 'console');
const OUT = join(ROOT, 'dist', 'console-app');

/** What is used of Vite's JS API (its types resolve under moduleResolution bundler only). */
interface Vite {
  build(config: {
    configFile: string;
    logLevel: 'silent';
    build: { outDir: string };
  }): Promise<unknown>;
}

function newestSource(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    return Math.max(newest, time);
  }, 0);
}

/** Whether the build in `out` (dist/console-app) is missing or older than a file of console/. */
export function consoleBuildStale(out = OUT): boolean {
  const page = join(out, 'index.html');
  return !existsSync(page) || statSync(page).mtimeMs < newestSource(SOURCES);
}

/**
 * Builds the console (as `npm run build:console` does) when its build is missing or older than
 * its sources, with Vite's JS API so that its output stays out of the service's log. Resolves
 * to what was done, in words.
 */
export async function ensureConsoleBuilt(out = OUT): Promise<string | null> {
  if (!consoleBuildStale(out)) return null;
  const started = Date.now();
  // Vite is a dev dependency (npm ci installs it); its ESM build loads through require(esm).
  const vite = (await import('vite' as string)) as Vite;
  await vite.build({
    configFile: join(SOURCES, 'vite.config.mts'),
    logLevel: 'silent',
    build: { outDir: out },
  });
  return (
    `console built into ${relative(ROOT, out)} in ${Date.now() - started} ms ` +
    '(npm start builds it when missing or older than console/)'
  );
}

/**
 * `npm start`'s prestart: a fresh clone serves /console without `npm run build:console`. An
 * argument builds elsewhere than dist/console-app (the tests' own folder).
 * One JSON line, in the shape of the service's log (docs/operations.md); a failed build is a
 * warning and the service starts anyway (/console then answers 503 saying what to run).
 */
if (require.main === module) {
  // The try-out logs warnings only (README), so its pre-script takes the level it will run at.
  const level = process.env.LOG_LEVEL ?? 'info';
  const log = pino({ level, base: { service: 'meeting-event-bridge' } }).child({
    context: 'Console',
  });
  ensureConsoleBuilt(process.argv[2]).then(
    (done) => {
      if (done !== null) log.info(done);
    },
    (error: Error) => log.warn({ err: error }, `console not built: ${error.message}`),
  );
}
