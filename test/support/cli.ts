import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProfileStore } from '../../src/cli/profiles';
import { runCli } from '../../src/cli/program';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/**
 * `meb` run in this process against `baseUrl`, its profiles in a home of its own (docs/cli.md),
 * for `use`; the home is removed afterwards, whatever happened.
 */
export async function withCli(
  baseUrl: string,
  use: (meb: (...args: string[]) => Promise<CliRun>) => Promise<void>,
): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'meb-test-'));
  const store = ProfileStore.forUser(home);
  const meb = async (...args: string[]): Promise<CliRun> => {
    let out = '';
    let err = '';
    const code = await runCli(['--url', baseUrl, ...args], {
      store,
      output: { out: (s) => (out += `${s}\n`), err: (s) => (err += `${s}\n`) },
    });
    return { code, out, err };
  };
  try {
    await use(meb);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
