/**
 * The sides the pipeline benches measure, each in its own process on a fresh database and queue
 * prefix: the app as deployed (compiled, start:prod's node flags, NODE_ENV=production) and the
 * baselines of bench/minimal-pipeline.ts, with the load generator that POSTs signed platform
 * events to them. Shared by bench/pipeline.ts and bench/deployed.ts.
 */
import { ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { Client } from 'pg';
import { Pool } from 'undici';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { freePort } from '../test/support/spawn-app';
import {
  CLIENTS,
  TEST_REDIS_URL,
  ZOOM_SECRET_TOKEN,
  deleteRedisKeys,
} from '../test/support/test-app';
import { TestDatabase, createTestDatabase } from '../test/support/test-db';
import { now, spawnNode, stopChild, subscribe, waitReady, zoomHeaders } from './support';

export const SUBSCRIBER_SECRET = 'bench-subscriber-secret-0123';
export const ENCRYPTION_KEY = randomBytes(32);
export const ROOT = join(__dirname, '..');
export const BASELINE_DIR = 'dist/bench';

/**
 * Every side runs as compiled JavaScript on plain node, as deployed (`npm run build`, then
 * `node dist/main.js`): under ts-node the compiler alone would add some 100 MB to each RSS.
 * The baselines (and `extra` bench scripts that run in processes of their own) are transpiled
 * beside it. BENCH_NO_BUILD=1 reuses an earlier build; BENCH_APP_ENTRY=<file> runs another build
 * of the app (an earlier commit's, for a before/after).
 */
export function build(extra: string[] = []): void {
  if (process.env.BENCH_NO_BUILD) return;
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', 'dist'],
    { cwd: ROOT, stdio: 'inherit' },
  );
  // support.ts imports scripts/client-token.ts: it lands at the same place relative to it.
  const files = ['minimal-pipeline', 'minimal-sql', 'support', ...extra]
    .map((name) => `bench/${name}`)
    .concat('scripts/client-token');
  for (const file of files) {
    const { outputText } = ts.transpileModule(readFileSync(join(ROOT, `${file}.ts`), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    mkdirSync(dirname(join(ROOT, 'dist', file)), { recursive: true });
    writeFileSync(join(ROOT, 'dist', `${file}.js`), outputText);
  }
}

export interface Sent {
  uuid: string;
  sentAt: number;
  answeredAt: number;
  status: number;
}

export interface Side {
  name: string;
  /** False for the raw chain: its events are Bull jobs added in its own process, not POSTs. */
  http: boolean;
  pid: number;
  database: TestDatabase | null;
  /** Sends `count` unique events, `concurrency` at a time (as the side was started with). */
  burst(tag: string, count: number): Promise<Sent[]>;
  close(): Promise<void>;
}

/** POSTs signed meeting.started events to `url` (/zoom/events of the app or a baseline). */
export async function httpBurst(
  pool: Pool,
  tag: string,
  count: number,
  concurrency: number,
): Promise<Sent[]> {
  const sent: Sent[] = [];
  let next = 0;
  const nonce = randomBytes(6).toString('base64url');
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const uuid = `${tag}-${nonce}-${next++}`;
        const body = JSON.stringify(meetingStarted(uuid, Date.now()));
        const sentAt = now();
        const res = await pool.request({
          path: '/zoom/events',
          method: 'POST',
          headers: zoomHeaders(body, ZOOM_SECRET_TOKEN),
          body,
        });
        await res.body.dump();
        sent.push({ uuid, sentAt, answeredAt: now(), status: res.statusCode });
      }
    }),
  );
  return sent;
}

export function httpSide(
  name: string,
  child: ChildProcess,
  url: string,
  database: TestDatabase,
  prefix: string,
  concurrency: number,
  /** More processes of the same side (workers), stopped with it. */
  others: ChildProcess[] = [],
): Side {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  return {
    name,
    http: true,
    pid: child.pid!,
    database,
    burst: (tag, count) => httpBurst(pool, tag, count, concurrency),
    async close() {
      await pool.close();
      await Promise.all([child, ...others].map((c) => stopChild(c)));
      if (process.env.BENCH_TRACE) await traceTables(database);
      await database.drop();
      await deleteRedisKeys(prefix);
    },
  };
}

/**
 * The client the bench subscribes with: the scopes it needs and no more, which every build of
 * the app knows (so BENCH_BEFORE_ENTRY can run one from before a scope was added).
 */
export const BENCH_CLIENT = { ...CLIENTS.alpha, scopes: 'webhooks:read webhooks:write' };

/** Node's flags in `npm run start:prod`, which is also the image's command (docker/Dockerfile). */
export const DEPLOYED_NODE_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  }
).scripts['start:prod']
  .split(' ')
  .filter((word) => word.startsWith('--'))
  .concat(process.env.BENCH_NODE_EXTRA ? process.env.BENCH_NODE_EXTRA.split(' ') : []);

/**
 * The app compiled, as deployed (start:prod's node flags, NODE_ENV=production, logs at info),
 * on a free port, over `databaseUrl` and the queue prefix; `env` adds to or overrides the
 * deployment's own settings. Resolves once /health/ready answers.
 */
export async function spawnDeployed(
  databaseUrl: string,
  prefix: string,
  env: Record<string, string>,
  { entry = process.env.BENCH_APP_ENTRY ?? 'dist/main.js', flags = DEPLOYED_NODE_FLAGS } = {},
): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawnNode([...flags, entry], ROOT, {
    NODE_ENV: 'production',
    PORT: String(port),
    APP_ROLE: 'all',
    LOG_LEVEL: 'info',
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    AUTH_TOKEN_SECRET: randomBytes(32).toString('hex'),
    AUTH_CLIENTS: JSON.stringify([BENCH_CLIENT]),
    SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY.toString('base64'),
    ZOOM_WEBHOOK_SECRET_TOKEN: ZOOM_SECRET_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(`${url}/health/ready`, child, 120_000);
  return { child, url };
}

export interface AppOptions {
  role: 'all' | 'api';
  /** Webhook URLs to subscribe to job.started, through the API. */
  subscriberUrls: string[];
  /** POSTs in flight at once during a burst. */
  concurrency: number;
  entry?: string;
  label?: string;
  /** Node flags; start:prod's by default. */
  flags?: string[];
  /** Environment beyond the deployment's own (every delivery setting at its default). */
  env?: Record<string, string>;
  /** This many more processes with APP_ROLE=worker over the same database and queues. */
  workers?: number;
}

/** The app in its own process (src/main.ts), as deployed, and `workers` more. */
export async function startApp(options: AppOptions): Promise<Side> {
  const {
    role,
    subscriberUrls,
    concurrency,
    entry = process.env.BENCH_APP_ENTRY ?? 'dist/main.js',
    label = 'app',
    flags = DEPLOYED_NODE_FLAGS,
    env = {},
    workers = 0,
  } = options;
  const database = await createTestDatabase();
  const prefix = `mebbench:${randomBytes(4).toString('hex')}`;
  const spawnRole = (processRole: string) =>
    spawnDeployed(database.url, prefix, { APP_ROLE: processRole, ...env }, { entry, flags });
  const { child, url } = await spawnRole(role);
  const others = await Promise.all(Array.from({ length: workers }, () => spawnRole('worker')));
  for (const hook of subscriberUrls) {
    await subscribe(url, BENCH_CLIENT, {
      url: hook,
      events: ['job.started'],
      secret: SUBSCRIBER_SECRET,
    });
  }
  const name = `${label} (APP_ROLE=${role}${workers > 0 ? ` + ${workers} workers` : ''})`;
  return httpSide(
    name,
    child,
    url,
    database,
    prefix,
    concurrency,
    others.map((o) => o.child),
  );
}

/** A baseline of bench/minimal-pipeline.ts in its own process. */
export async function startMinimal(
  mode: 'durable' | 'ingest' | 'chain',
  receiverUrl: string,
  concurrency: number,
) {
  const database = await createTestDatabase();
  const prefix = `mebbench:${randomBytes(4).toString('hex')}`;
  const child = spawnNode(
    [`${BASELINE_DIR}/minimal-pipeline.js`, mode],
    ROOT,
    {
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: prefix,
      ZOOM_SECRET_TOKEN,
      RECEIVER_URL: receiverUrl,
      SUBSCRIBER_SECRET,
      DELIVERY_CONCURRENCY: '50',
    },
    ['ignore', 'ignore', 'inherit', 'ipc'],
  );
  const [message] = (await once(child, 'message')) as [{ port?: number }];
  if (mode !== 'chain') {
    const name =
      mode === 'durable'
        ? 'minimal durable pipeline'
        : 'minimal durable ingest (verify, insert, 200)';
    return httpSide(name, child, `http://127.0.0.1:${message.port}`, database, prefix, concurrency);
  }
  const side: Side = {
    name: 'raw Bull chain (job → sign → POST)',
    http: false,
    pid: child.pid!,
    database: null,
    async burst(tag, count) {
      child.send({
        burst: {
          tag: `${tag}-${randomBytes(6).toString('base64url')}`,
          count,
          concurrency,
        },
      });
      const [{ sent }] = (await once(child, 'message')) as [{ sent: [string, number][] }];
      return sent.map(([uuid, sentAt]) => ({ uuid, sentAt, answeredAt: sentAt, status: 200 }));
    },
    async close() {
      await stopChild(child);
      await database.drop();
      await deleteRedisKeys(prefix);
    },
  };
  return side;
}
/** BENCH_TRACE=1: rows written and updated per table, and how many updates were HOT. */
export async function traceTables(database: TestDatabase): Promise<void> {
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
       FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd > 0 ORDER BY relname`,
    );
    console.log(rows.map((r) => JSON.stringify(r)).join('\n'));
  } finally {
    await client.end();
  }
}
