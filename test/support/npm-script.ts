import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface NpmScript {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output: () => string;
  exit: Promise<number | null>;
  /** SIGTERM to npm and everything it started, then waits for npm to exit. */
  stop(): Promise<void>;
}

/**
 * Runs `npm run <script> -- <args>` as a user would, in its own process group so stop() reaches
 * the node process behind npm's shell too.
 */
export function runNpmScript(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): NpmScript {
  const child = spawn('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    output: () => text,
    exit,
    async stop() {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch (error) {
          // The group is already gone (ESRCH): nothing left to stop.
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        }
      }
      await exit;
    },
  };
}
