import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** A program from the system's packages that some suite needs (README's prerequisites). */
export interface Prerequisite {
  /** What is missing, in words: `/usr/bin/chromium`, `Flask under /usr/bin/python3`. */
  what: string;
  /** The Debian package that brings it. */
  debianPackage: string;
  /** Why it is not usable here, or undefined when it is. */
  missing(): string | undefined;
}

export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM: Prerequisite = {
  what: CHROMIUM_PATH,
  debianPackage: 'chromium',
  missing: () => (existsSync(CHROMIUM_PATH) ? undefined : `no ${CHROMIUM_PATH}`),
};

/** Debian's python3 with Debian's Flask, which docs/receiving.md's Flask receiver runs under. */
export const FLASK: Prerequisite = {
  what: 'Flask under /usr/bin/python3',
  debianPackage: 'python3-flask',
  missing: () => {
    const run = spawnSync('/usr/bin/python3', ['-c', 'import flask'], { encoding: 'utf8' });
    if (run.error) return `/usr/bin/python3 cannot be run (${run.error.message})`;
    if (run.status === 0) return undefined;
    // The import error's own last line: `ModuleNotFoundError: No module named 'flask'`.
    const said = run.stderr.trim().split('\n').at(-1) ?? `exit ${run.status}`;
    return `/usr/bin/python3 cannot import flask (${said})`;
  },
};

/**
 * Whether a suite's prerequisite is here. .ci/run installs every one and sets CI, so there a
 * missing one is a failure; on a developer machine without it the suite is skipped with a
 * notice that names the package, instead of failing `npm test`.
 */
export function have(prerequisite: Prerequisite, suite: string): boolean {
  const missing = prerequisite.missing();
  if (missing === undefined) return true;
  const install = `apt-get install ${prerequisite.debianPackage}`;
  if (process.env.CI) {
    throw new Error(`${suite}: ${missing}: .ci/run installs it (${install})`);
  }
  process.stderr.write(`${suite} skipped: ${missing} (${install})\n`);
  return false;
}
