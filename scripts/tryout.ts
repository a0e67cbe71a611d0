/**
 * `npm run tryout [-- --reset] [-- --receiver-url …] [-- --fake-platform [--fake-platform-port
 * 4100]]`: the service as `npm start` runs it, set
 * up for trying it on one machine: its own database (`meeting_event_bridge_tryout`, made when
 * missing; `--reset` starts it empty) and Redis keys (`meb-tryout`), an API client holding every
 * scope (queues:admin too), loopback receivers allowed, a platform secret token that
 * `npm run send-event` signs with, and the receiver of `npm run receiver` subscribed — found
 * again on every start, never subscribed twice. Logs warnings and errors only; a banner says
 * what to do next. PORT, DATABASE_URL, REDIS_URL, QUEUE_PREFIX and LOG_LEVEL are taken from the
 * environment when set.
 *
 * With `--fake-platform`, a platform on this machine (scripts/platform/fake-platform.ts) stands
 * in for an account: the service holds its event WebSocket, and a reconciliation finds the
 * meeting its reports list and no event told of. The schedule is off (RECONCILE_INTERVAL_MS=0),
 * so that what reconciles the meeting is the run the banner names.
 */
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { SCOPES } from '../src/config/config.types';
import { clientToken } from './client-token';
import type { FakePlatform } from './platform/fake-platform';
import { deleteQueueKeys } from './queue-keys';
import { TRYOUT } from './tryout-settings';

const { values } = parseArgs({
  options: {
    reset: { type: 'boolean', default: false },
    'receiver-url': { type: 'string', default: `http://127.0.0.1:${TRYOUT.receiverPort}/hook` },
    'fake-platform': { type: 'boolean', default: false },
    'fake-platform-port': { type: 'string', default: String(TRYOUT.fakePlatformPort) },
  },
});
const receiverUrl = values['receiver-url'];

const tryoutEnv: Record<string, string> = {
  // Development: the built-in keys for tokens and stored secrets are fine here.
  NODE_ENV: 'development',
  AUTH_CLIENTS: JSON.stringify([
    { client_id: TRYOUT.clientId, client_secret: TRYOUT.clientSecret, scopes: SCOPES.join(' ') },
  ]),
  // The receiver listens on 127.0.0.1, which the SSRF policy refuses by default.
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  ZOOM_WEBHOOK_SECRET_TOKEN: TRYOUT.zoomSecretToken,
};
Object.assign(process.env, tryoutEnv);
process.env.PORT ??= String(TRYOUT.servicePort);
process.env.DATABASE_URL ??= TRYOUT.databaseUrl;
process.env.QUEUE_PREFIX ??= TRYOUT.queuePrefix;
process.env.REDIS_URL ??= 'redis://localhost:6379';
// The ~225 route lines and the per-request lines are for operators; a try-out wants the banner.
process.env.LOG_LEVEL ??= 'warn';
const port = Number(process.env.PORT);
const base = `http://localhost:${port}`;
const databaseUrl = process.env.DATABASE_URL;

/** The fake platform, started and the service pointed at it, when --fake-platform is given. */
async function prepareFakePlatform(): Promise<FakePlatform | undefined> {
  if (!values['fake-platform']) return undefined;
  // Loaded only here: a try-out against no platform needs none of the fakes.
  const { startFakePlatform } = await import('./platform/fake-platform');
  const platform = await startFakePlatform(Number(values['fake-platform-port']));
  Object.assign(process.env, platform.env, { RECONCILE_INTERVAL_MS: '0' });
  return platform;
}

/** Makes the try-out's database when missing; with --reset, drops it (and its Redis keys) first. */
async function prepareDatabase(): Promise<string> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect().catch((error: Error) => {
    throw new Error(
      `PostgreSQL at ${url.host} (DATABASE_URL) cannot be reached (${error.message}): start it, or set DATABASE_URL`,
    );
  });
  try {
    const quoted = `"${name.replace(/"/g, '""')}"`;
    if (values.reset) await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE ${quoted}`);
  } finally {
    await client.end();
  }
  if (values.reset)
    await deleteQueueKeys(process.env.REDIS_URL as string, process.env.QUEUE_PREFIX as string);
  return name;
}

interface Webhook {
  id: string;
  url: string;
  active: boolean;
  /** The last 4 characters of the secret it signs with (the API never returns a secret). */
  secret_hint: string;
  previous_secret_expires_at: string | null;
}

/**
 * What the banner says of the webhook's secret. Found again after `meb webhooks rotate`, it
 * signs with the new secret, and the try-out's verifies only as the previous one until its
 * grace ends: naming the try-out's as the secret then would send the reader astray.
 */
function secretLines(webhook: Webhook): { signed: string; receiver: string } {
  if (TRYOUT.webhookSecret.endsWith(webhook.secret_hint)) {
    return {
      signed: `signed with the secret ${TRYOUT.webhookSecret}`,
      receiver: 'npm run receiver',
    };
  }
  const grace = webhook.previous_secret_expires_at
    ? `; the previous one verifies until ${webhook.previous_secret_expires_at}`
    : '';
  return {
    signed:
      `signed with the secret it was rotated to (ending in ${webhook.secret_hint}), ` +
      `not the try-out's${grace}`,
    receiver: 'npm run receiver -- --secret <the new secret>',
  };
}

async function api<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * The try-out's webhook to the receiver: the one already there (enabled again if it was
 * paused), else a new one. Re-running the try-out never subscribes the receiver twice.
 */
async function ensureWebhook(): Promise<{ webhook: Webhook; found: boolean }> {
  const token = await clientToken(`http://127.0.0.1:${port}`, {
    client_id: TRYOUT.clientId,
    client_secret: TRYOUT.clientSecret,
  });
  let cursor: string | null = null;
  do {
    const page: { data: Webhook[]; next_cursor: string | null } = await api(
      token,
      'GET',
      `/api/webhooks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    const mine = page.data.find((w) => w.url === receiverUrl);
    if (mine) {
      const webhook = mine.active
        ? mine
        : await api<Webhook>(token, 'PATCH', `/api/webhooks/${mine.id}`, { active: true });
      return { webhook, found: true };
    }
    cursor = page.next_cursor;
  } while (cursor);
  const webhook = await api<Webhook>(token, 'POST', '/api/webhooks', {
    url: receiverUrl,
    events: [...TRYOUT.webhookEvents],
    secret: TRYOUT.webhookSecret,
  });
  return { webhook, found: false };
}

/** The banner's lines on the fake platform, and the steps it adds. */
function platformLines(platform: FakePlatform | undefined): { about: string[]; next: string[] } {
  if (!platform) return { about: [], next: [] };
  const at = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');
  // A little before the meeting began, so that the window holds all of it.
  const since = at(new Date(Date.parse(platform.missed.start) - 10 * 60_000).toISOString());
  const via = `--platform-url ${platform.controlUrl}`;
  return {
    about: [
      `  fake platform on this machine (no account): tokens, REST API, event socket, reports;`,
      `    the service holds its socket (meb inbound status); scheduled reconciliation is off`,
      `    its reports list a meeting no event told of: "${platform.missed.meeting.topic}", ` +
        `${platform.missed.start} to ${platform.missed.end}`,
    ],
    next: [
      `  4. an event over the platform's socket: npm run send-event -- --via websocket meeting.started` +
        (platform.controlUrl.endsWith(`:${TRYOUT.fakePlatformPort}`) ? '' : ` ${via}`),
      `  5. recover the missed meeting:         meb reconcile --since ${since} --wait`,
    ],
  };
}

async function announce(database: string, platform: FakePlatform | undefined): Promise<void> {
  const { webhook, found } = await ensureWebhook();
  const secret = secretLines(webhook);
  const login = `meb login --client-id ${TRYOUT.clientId} --client-secret ${TRYOUT.clientSecret}`;
  const fake = platformLines(platform);
  process.stdout.write(
    [
      '',
      `Try-out service on ${base} (NOT for production: every secret here is public)`,
      `  database ${database}, kept between runs (npm run tryout -- --reset starts it empty)`,
      `  API client: ${TRYOUT.clientId} / ${TRYOUT.clientSecret} (every scope)`,
      `  webhook ${webhook.id} ${found ? '(found again)' : '(created)'}: ${TRYOUT.webhookEvents.join(', ')} → ${receiverUrl}`,
      `    ${secret.signed}`,
      ...fake.about,
      `  Swagger UI: ${base}/docs   queue dashboard: ${base}/admin/queues`,
      `  logs: warnings and errors only (LOG_LEVEL=info npm run tryout for every request)`,
      'Next:',
      `  1. in a second terminal: ${secret.receiver}`,
      '  2. in a third:           npm run send-event -- meeting.started',
      `  3. follow the deliveries: ${login}`,
      `                            meb deliveries tail ${webhook.id}`,
      ...fake.next,
      '',
    ].join('\n'),
  );
}

Promise.all([prepareDatabase(), prepareFakePlatform()]).then(
  async ([database, platform]) => {
    // main.ts reads the environment as it loads, so it is loaded only now. A start that fails
    // (PORT taken) has said why in one line and exited before `listening` would resolve.
    const { listening } = await import('../src/main');
    await listening;
    await announce(database, platform).catch((error: Error) => {
      process.stderr.write(`npm run tryout: could not subscribe the receiver: ${error.message}\n`);
    });
  },
  (error: Error) => {
    process.stderr.write(`npm run tryout: ${error.message}\n`);
    process.exit(1);
  },
);
