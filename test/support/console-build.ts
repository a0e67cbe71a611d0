import { consoleBuildStale } from '../../scripts/ensure-console';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * The console's browser tests run against the built front end, as the image serves it.
 * `npm run build` makes it (CI builds before testing), and `npm start` when it is missing; a
 * missing or older build is made here, so a test never drives a console that is not the
 * source's.
 */
export function ensureConsoleBuilt(): void {
  if (!consoleBuildStale()) return;
  execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: ROOT, stdio: 'pipe' });
}
