/**
 * `npm run bench`: every performance target of docs/benchmarks.md in one run, each beside the
 * baseline measured in the same run, then the machine and one table (target, figure, baseline,
 * ratio, met). It runs bench/pipeline.ts (end to end, ingest, fan-out, tracing on and off, one
 * Redis beside a Redis Cluster) and
 * bench/deployed.ts (the deployed defaults: fast, slow, five, workers, history), then
 * bench/websocket.ts (the platform's socket beside its webhooks) and bench/reconcile.ts (a day
 * reconciled), bench/attendance.ts, bench/accounts.ts (1,000 installed accounts beside one) and
 * bench/partitions.ts (a burst on a partitioned history beside empty tables, a day dropped)
 * one after the other, each printing its own detail as it goes; their rows come
 * back through BENCH_RESULTS.
 *
 *   npm run bench                  the figures of docs/benchmarks.md
 *   BENCH_SCALE=0.01 npm run bench every burst a hundredth (a check that it runs; the
 *                                  figures then mean nothing)
 *   npm run bench -- websocket     only bench/websocket.ts (names comma-separated)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem, release } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { TEST_REDIS_URL } from '../test/support/test-app';
import { ADMIN_DATABASE_URL } from '../test/support/test-db';
import { ROOT } from './sides';
import { SCALE, TargetRow, scaled } from './results';

/** What the figures were taken on: CPU, cores, memory, and the versions that serve them. */
async function machine(): Promise<string[]> {
  const pg = new Client({ connectionString: ADMIN_DATABASE_URL });
  await pg.connect();
  const postgres = (await pg.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
    .rows[0].v;
  await pg.end();
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  const npm = execFileSync('npm', ['--version'], { encoding: 'utf8' }).trim();
  return [
    `CPU: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores`,
    `memory: ${(totalmem() / 2 ** 30).toFixed(1)} GiB; Linux ${release()}`,
    `Node.js ${process.version}, npm ${npm}, PostgreSQL ${postgres}, ` +
      `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'}`,
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  ];
}

function run(script: string, args: string[], results: string): void {
  console.log(`\n=== ${script} ${args.join(' ')}\n`);
  const done = spawnSync(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join('bench', script), ...args],
    { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BENCH_RESULTS: results } },
  );
  if (done.status !== 0) throw new Error(`${script} exited ${done.status ?? done.signal}`);
}

function table(rows: TargetRow[]): string {
  const cells = [
    ['target', 'figure', 'same-run baseline', 'ratio', 'met'],
    ...rows.map((r) => [r.target, r.figure, r.baseline, r.ratio, r.met ? 'met' : 'MISSED']),
  ].map((row) => row.map((cell) => cell.replace(/\|/g, '\\|')));
  const line = (row: string[]) => `| ${row.join(' | ')} |`;
  return [line(cells[0]), line(cells[0].map(() => '---')), ...cells.slice(1).map(line)].join('\n');
}

/** What `npm run bench` runs, in order: each script of bench/ with its arguments. */
const BENCHES: [string, string[]][] = [
  // events, concurrency, warm-up, rounds, phases
  [
    'pipeline.ts',
    [String(scaled(5000)), '50', String(scaled(2000)), '3', 'e2e,ingest,fanout,tracing,cluster'],
  ],
  ['deployed.ts', ['fast,slow,five,workers,history']],
  // events, rounds, connections
  ['websocket.ts', [String(scaled(5000)), '3', '32']],
  // meetings, participants, RECONCILE_MAX_RPS, platform latency (ms)
  ['reconcile.ts', [String(scaled(2000)), String(scaled(50_000)), '20', '250']],
  // participants (each joins, leaves and joins again: three events)
  ['attendance.ts', [String(scaled(10_000))]],
  // events, installed accounts (each its client's one webhook), rounds
  ['accounts.ts', [String(scaled(5000)), '1000', '3']],
  // historical deliveries (a million, not the 20 million of docs/benchmarks.md: generating
  // those alone takes longer than the rest of this run), events, rate during the drop
  ['partitions.ts', [String(scaled(1_000_000)), String(scaled(5000)), '100']],
];
const NAMES = BENCHES.map(([script]) => script.replace(/\.ts$/, ''));

const USAGE = `Usage: npm run bench [-- <name>[,<name>…]]   (names: ${NAMES.join(', ')})
       BENCH_SCALE=0.01 npm run bench   every burst a hundredth: a check that it runs

Every performance target of docs/benchmarks.md, each beside its same-run baseline, then the
machine and one table. With names, only those benches. Each bench runs alone too, with
--help for its arguments: node -r ts-node/register/transpile-only bench/<name>.ts --help
`;

/**
 * The benches to run (`npm run bench -- pipeline,websocket`: only those), or the exit code
 * after printing the usage (asked for: 0; a name that is none: 2).
 */
function chosen(argv: string[]): string[] | number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const names = argv.flatMap((arg) => arg.split(',')).filter(Boolean);
  const unknown = names.filter((name) => !NAMES.includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`npm run bench: no bench named ${unknown.join(', ')}\n\n${USAGE}`);
    return 2;
  }
  return names.length === 0 ? NAMES : names;
}

async function main(only: string[]): Promise<void> {
  const started = Date.now();
  const about = await machine();
  const dir = mkdtempSync(join(tmpdir(), 'meb-bench-'));
  const results = join(dir, 'results.jsonl');
  try {
    for (const [script, args] of BENCHES) {
      if (only.includes(script.replace(/\.ts$/, ''))) run(script, args, results);
    }
    const rows = readFileSync(results, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TargetRow);
    console.log(
      [
        '',
        `npm run bench, ${new Date().toISOString()}, ${((Date.now() - started) / 60_000).toFixed(1)} min` +
          (SCALE < 1 ? ` (BENCH_SCALE=${SCALE}: the figures mean nothing)` : ''),
        ...about,
        '',
        table(rows),
        '',
        `${rows.filter((r) => r.met).length} of ${rows.length} targets met`,
      ].join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const only = chosen(process.argv.slice(2));
if (typeof only === 'number') {
  process.exit(only);
} else {
  main(only).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
