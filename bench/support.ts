/**
 * What the bench scripts share: signed platform events, spawned processes (the app as deployed,
 * or a script of the bench's own) and what /proc tells about them. Imports nothing of the app or
 * the tests: bench/minimal-pipeline.ts runs with it alone.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { ClientCredentials, clientToken } from '../scripts/client-token';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export const now = (): number => performance.timeOrigin + performance.now();

export const percentile = (values: number[], p: number): number =>
  values.length === 0
    ? NaN
    : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

/** The platform's headers for `body`, signed with `secret` (docs/api.md#platform-events-post-zoomevents). */
export function zoomHeaders(body: string, secret: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', secret).update(`v0:${ts}:`).update(body).digest('hex');
  return {
    'content-type': 'application/json',
    'x-zm-request-timestamp': ts,
    'x-zm-signature': `v0=${sig}`,
  };
}

/** CPU seconds (user + system) a process has used so far (Linux /proc), NaN when unknown. */
export function cpuSecondsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks
  } catch {
    return NaN;
  }
}

/** Resident set size of a process in MB (Linux /proc), NaN when unknown. */
export function rssMbOf(pid: number | undefined): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return line ? Number(line[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the highest seen. */
export function sampleRss(pid: number | undefined, everyMs = 20): { stop(): number } {
  let peak = rssMbOf(pid);
  const timer = setInterval(() => {
    const rss = rssMbOf(pid);
    if (rss > peak || Number.isNaN(peak)) peak = rss;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssMbOf(pid));
    },
  };
}

/**
 * Runs `node ...args` in `cwd`, with nothing of this environment but PATH. BENCH_CPU_PROF=<dir>
 * writes a V8 CPU profile of it there.
 */
export function spawnNode(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  stdio: ('ignore' | 'inherit' | 'ipc')[] = ['ignore', 'ignore', 'inherit'],
): ChildProcess {
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  return spawn(process.execPath, [...profile, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio,
  });
}

/** Polls `url` until it answers 200; fails when the process exits or after `timeoutMs`. */
export async function waitReady(url: string, child: ChildProcess, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} not ready in ${timeoutMs / 1000} s`);
}

/** SIGTERM, and SIGKILL if it has not exited within 15 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Creates webhooks through the app's API, as an API client would. */
export async function subscribe(
  appUrl: string,
  client: ClientCredentials,
  webhook: { url: string; events: string[]; secret: string },
): Promise<void> {
  const token = await clientToken(appUrl, client);
  const hook = await fetch(`${appUrl}/api/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(webhook),
  });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);
}

/**
 * `--help` (or `-h`) among a bench script's arguments: prints how to run it and the comment
 * that opens the file, and exits 0; its positional arguments would otherwise read the flag as
 * a count (NaN). `args` lists them in order, each with its default.
 */
export function helpIfAsked(file: string, args: string): void {
  const argv = process.argv.slice(2);
  if (!argv.includes('--help') && !argv.includes('-h')) return;
  const name = file.slice(file.lastIndexOf('bench/'));
  const opening = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  const about = opening
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
  process.stdout.write(
    `Usage: node -r ts-node/register/transpile-only ${name} ${args}\n\n${about}\n`,
  );
  process.exit(0);
}
