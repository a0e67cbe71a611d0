import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SOURCES = join(ROOT, 'console');
const BUILT = join(ROOT, 'dist', 'console-app', 'index.html');

function newestSource(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((newest, entry) => {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs;
    return Math.max(newest, time);
  }, 0);
}

/**
 * The console's browser tests run against the built front end, as the image serves it.
 * `npm run build` makes it (CI builds before testing); a missing or older build is made
 * here, so a test never drives a console that is not the source's.
 */
export function ensureConsoleBuilt(): void {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSource(SOURCES)) return;
  execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: ROOT, stdio: 'pipe' });
}
