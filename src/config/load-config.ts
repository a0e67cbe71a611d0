import { createHash } from 'node:crypto';
import {
  APP_ROLES,
  ApiClientConfig,
  AppConfig,
  AppRoleName,
  BROKER_NAMESPACES,
  BROKER_SCHEMES,
  BrokerConfig,
  BrokerNamespace,
  BrokerTypeName,
  DEFAULT_BROKER_PREFIX,
  OTLP_PROTOCOLS,
  RedisNode,
  SCOPES,
  Scope,
  TRACE_SAMPLERS,
  TelemetryConfig,
} from './config.types';

export type Env = Record<string, string | undefined>;

/** Thrown with every bad variable named, so one start shows all that must be fixed. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// Public so tests and docs can rely on one set of defaults.
export const DEV_AUTH_TOKEN_SECRET = 'dev-only-auth-token-secret-do-not-use-in-production';
const DEV_ENCRYPTION_KEY = createHash('sha256').update('dev-only-secrets-encryption-key').digest();

/**
 * Variables that carry a secret (DATABASE_URL and REDIS_URL through their passwords). A
 * template's placeholder left in one of them (docker/k8s/secret.yaml says CHANGE_ME) must stop
 * the process: a guessable platform token or password would otherwise be accepted as real.
 */
export const SECRET_VARIABLES = [
  'DATABASE_URL',
  'REDIS_URL',
  'REDIS_PASSWORD',
  'AUTH_TOKEN_SECRET',
  'AUTH_CLIENTS',
  'SECRETS_ENCRYPTION_KEY',
  'ZOOM_WEBHOOK_SECRET_TOKEN',
  'ZOOM_CLIENT_SECRET',
  'ZOOM_APP_CLIENT_SECRET',
  'DESTINATION_BROKERS',
] as const;
const PLACEHOLDER = /change[_-]?me|replace[_-]?me/i;

class Reader {
  readonly problems: string[] = [];
  private readonly placeholders = new Set<string>();

  constructor(private readonly env: Env) {
    for (const name of SECRET_VARIABLES) {
      const found = PLACEHOLDER.exec(this.raw(name) ?? '');
      if (!found) continue;
      // Only the placeholder is quoted: the rest of the value may be a real secret.
      this.problems.push(`${name} still holds the placeholder "${found[0]}": set the real value`);
      this.placeholders.add(name);
    }
  }

  /** The trimmed value, or undefined when unset, empty, or already refused as a placeholder. */
  raw(name: string): string | undefined {
    if (this.placeholders.has(name)) return undefined;
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  /** Reports a variable production cannot do without, unless it was refused already. */
  require(name: string, production: boolean): void {
    if (production && !this.placeholders.has(name)) {
      this.problems.push(`${name} is required when NODE_ENV=production`);
    }
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optional(name: string): string | null {
    return this.raw(name) ?? null;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return Number(value);
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name} must be true or false, got "${value}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, fallback: string, protocols: string[]): string {
    const value = this.raw(name) ?? fallback;
    if (!isUrlOf(value, protocols)) {
      this.problems.push(`${name} must be a ${protocols.join(' or ')} URL`);
      return fallback;
    }
    return value.replace(/\/+$/, '');
  }

  /**
   * The entries of a variable holding a JSON array of objects (`what` says of what, in the
   * problem when it holds anything else), each with where it stands for the entry's problems.
   * An entry that is not an object has none of the fields: each is reported missing.
   */
  jsonEntries(name: string, what: string): { at: string; item: Record<string, unknown> }[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed)) {
      this.problems.push(`${name} must be a JSON array of ${what}`);
      return [];
    }
    return parsed.map((entry: unknown, index) => ({
      at: `${name}[${index}]`,
      item: (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>,
    }));
  }

  /** The name of a list's entry (`field`, e.g. AUTH_CLIENTS[0].client_id): its form, and once. */
  entryName(value: unknown, field: string, seen: Set<string>): value is string {
    if (typeof value !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(value)) {
      this.problems.push(`${field} must be 1-64 characters of letters, digits, . _ -`);
      return false;
    }
    if (seen.has(value)) this.problems.push(`${field} "${value}" is listed twice`);
    seen.add(value);
    return true;
  }
}

/** An absolute URL of one of `protocols` (as URL.protocol spells them), with a host. */
function isUrlOf(value: unknown, protocols: readonly string[]): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return protocols.includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}

/** An AUTH_CLIENTS entry's `accounts`: absent or "*" every account; null when malformed. */
function parseAccounts(value: unknown): '*' | string[] | null {
  if (value === undefined || value === '*') return '*';
  if (!Array.isArray(value)) return null;
  if (!value.every((id) => typeof id === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(id))) {
    return null;
  }
  return value.includes('*') ? '*' : [...new Set(value as string[])];
}

function parseClients(reader: Reader, name: string): ApiClientConfig[] {
  const clients: ApiClientConfig[] = [];
  const seen = new Set<string>();
  for (const { at, item } of reader.jsonEntries(name, 'clients')) {
    const { client_id: id, client_secret: secret, scopes, accounts } = item;
    if (!reader.entryName(id, `${at}.client_id`, seen)) continue;
    if (typeof secret !== 'string' || secret.length < 16) {
      reader.problems.push(`${at}.client_secret must be a string of at least 16 characters`);
      continue;
    }
    if (typeof scopes !== 'string') {
      reader.problems.push(`${at}.scopes must be a space-separated string of scopes`);
      continue;
    }
    const list = scopes.split(/\s+/).filter(Boolean);
    const unknown = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0) {
      reader.problems.push(`${at}.scopes has unknown scope(s): ${unknown.join(', ')}`);
      continue;
    }
    const held = parseAccounts(accounts);
    if (held === null) {
      reader.problems.push(`${at}.accounts must be "*" or an array of account id strings`);
      continue;
    }
    clients.push({
      clientId: id,
      clientSecret: secret,
      scopes: [...new Set(list)] as Scope[],
      accounts: held,
    });
  }
  return clients;
}

// Dot-terminated tokens that both an exchange name and a NATS subject may begin with.
const BROKER_PREFIX = /^([A-Za-z0-9_-]+\.){0,8}$/;
// Names the brokers keep for themselves (docs/destinations.md): no client's part begins so.
const RESERVED_PREFIX = /^(amq\.|_INBOX)/;

/**
 * DESTINATION_BROKERS (docs/destinations.md): names unique, a known type, a URL of that type's
 * scheme, how clients share it (`namespace`, `prefix`). The URL may carry credentials, so a
 * problem never quotes it.
 */
function parseBrokers(reader: Reader, name: string): BrokerConfig[] {
  const brokers: BrokerConfig[] = [];
  const seen = new Set<string>();
  const fields = ['name', 'type', 'url', 'namespace', 'prefix'];
  for (const { at, item } of reader.jsonEntries(name, '{"name","type","url"} brokers')) {
    const unknown = Object.keys(item).filter((k) => !fields.includes(k));
    if (unknown.length > 0)
      reader.problems.push(`${at} has unknown field(s): ${unknown.join(', ')}`);
    const { name: brokerName, type, url, namespace = 'client', prefix } = item;
    if (!reader.entryName(brokerName, `${at}.name`, seen)) continue;
    if (typeof type !== 'string' || !Object.hasOwn(BROKER_SCHEMES, type)) {
      reader.problems.push(`${at}.type must be one of ${Object.keys(BROKER_SCHEMES).join(', ')}`);
      continue;
    }
    const protocols: readonly string[] = BROKER_SCHEMES[type as BrokerTypeName];
    if (!isUrlOf(url, protocols)) {
      reader.problems.push(`${at}.url must be a ${protocols.join(' or ')} URL`);
      continue;
    }
    if (!(BROKER_NAMESPACES as readonly unknown[]).includes(namespace)) {
      reader.problems.push(`${at}.namespace must be one of ${BROKER_NAMESPACES.join(', ')}`);
      continue;
    }
    if (prefix !== undefined && namespace !== 'client') {
      reader.problems.push(`${at}.prefix applies only to "namespace": "client"`);
      continue;
    }
    if (
      prefix !== undefined &&
      (typeof prefix !== 'string' || !BROKER_PREFIX.test(prefix) || RESERVED_PREFIX.test(prefix))
    ) {
      reader.problems.push(
        `${at}.prefix must be "" or up to 8 tokens of letters, digits, _ - each ending in "." ` +
          '(not amq. nor _INBOX)',
      );
      continue;
    }
    brokers.push({
      name: brokerName,
      type: type as string,
      url,
      namespace: namespace as BrokerNamespace,
      prefix: (prefix as string | undefined) ?? DEFAULT_BROKER_PREFIX,
    });
  }
  return brokers;
}

/**
 * A client's part of a broker is `<prefix><client_id>.`: with client ids `a` and `a.b`, the
 * second's part lies inside the first's, so `a` could publish where `b`'s consumers read.
 */
function checkNamespacesApart(
  reader: Reader,
  brokers: BrokerConfig[],
  clients: ApiClientConfig[],
): void {
  if (!brokers.some((b) => b.namespace === 'client')) return;
  const ids = clients.map((c) => c.clientId);
  for (const outer of ids) {
    const inner = ids.find((id) => id !== outer && id.startsWith(`${outer}.`));
    if (inner === undefined) continue;
    reader.problems.push(
      `AUTH_CLIENTS: client ids "${outer}" and "${inner}" would share a part of the brokers of ` +
        `DESTINATION_BROKERS ("${inner}." lies within "${outer}."): rename one, or give the ` +
        'brokers "namespace": "shared"',
    );
  }
}

function parseKey(reader: Reader, name: string, production: boolean): Buffer {
  const value = reader.raw(name);
  if (value === undefined) {
    reader.require(name, production);
    return DEV_ENCRYPTION_KEY;
  }
  const key = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, 'hex')
    : Buffer.from(value, 'base64');
  if (key.length !== 32) {
    reader.problems.push(
      `${name} must be 32 bytes, base64 or hex encoded (openssl rand -base64 32)`,
    );
    return DEV_ENCRYPTION_KEY;
  }
  return key;
}

function parseFileTypes(reader: Reader, name: string): string[] | null {
  const value = reader.raw(name);
  if (value === undefined || value.toLowerCase() === 'all') return null;
  const types = value
    .split(',')
    .map((t) => t.trim().toUpperCase())
    .filter(Boolean);
  if (types.length === 0 || types.some((t) => !/^[A-Z0-9_]+$/.test(t))) {
    reader.problems.push(`${name} must be a comma-separated list of file types such as MP4,M4A`);
    return null;
  }
  return types;
}

/**
 * Comma-separated `host` or `host:port` (no scheme, no path), lower-cased: a URL's `host` is
 * compared with them as it is, so anything else could never match and is refused instead.
 */
function parseHosts(reader: Reader, name: string): string[] {
  const value = reader.raw(name);
  if (value === undefined || value.trim() === '') return [];
  const hosts = value.split(',').map((h) => h.trim().toLowerCase());
  const bad = hosts.find(
    (h) => !/^[a-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9a-f:.]+\](:[0-9]{1,5})?$/.test(h),
  );
  if (bad !== undefined) {
    reader.problems.push(
      `${name} must be hosts or host:port pairs separated by commas, got ${JSON.stringify(bad)}`,
    );
    return [];
  }
  return hosts;
}

function httpTimeouts(reader: Reader): AppConfig['http'] {
  const headersTimeoutMs = reader.int('HTTP_HEADERS_TIMEOUT_MS', 10000, 100, 600000);
  const requestTimeoutMs = reader.int('HTTP_REQUEST_TIMEOUT_MS', 30000, 100, 3600000);
  // Node would silently let the request limit win, so the headers one would mean nothing.
  if (headersTimeoutMs > requestTimeoutMs) {
    reader.problems.push(
      `HTTP_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  // Each open connection holds a file descriptor and some memory; past this many, new ones are
  // answered 503 with Retry-After (src/common/http-server.ts) instead of piling up.
  const maxConnections = reader.int('HTTP_MAX_CONNECTIONS', 1000, 1, 1_000_000);
  return { headersTimeoutMs, requestTimeoutMs, maxConnections };
}

/**
 * Several platform apps, or a rotation, each bring a secret token: comma-separated, blanks
 * around them ignored. A value that leaves an empty entry is refused rather than guessed at.
 */
function parseSecretTokens(reader: Reader, name: string): string[] {
  const value = reader.raw(name);
  if (value === undefined) return [];
  const tokens = value.split(',').map((t) => t.trim());
  if (tokens.some((t) => t === '')) {
    reader.problems.push(`${name} must be one secret token or several separated by commas`);
    return [];
  }
  return tokens;
}

/**
 * Space-separated origins (scheme, host, optional port; nothing else). Each lands verbatim in
 * a Content-Security-Policy header, so anything that could end or extend the directive (a
 * `;`, a keyword such as 'self', a bare `*`, a path) is refused rather than passed on; a
 * host wildcard (https://*.example.com) is a CSP source of its own and is kept.
 */
/**
 * A host as a CSP source expression may spell it: the URL parser takes `;` and `,` in a host
 * name, and `https://portal.example.com;script-src` would become a directive of its own.
 */
const CSP_HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9-]+(\.[a-z0-9-]+)*)$/i;

function parseOrigins(reader: Reader, name: string): string[] {
  const value = reader.raw(name);
  if (value === undefined) return [];
  const origins: string[] = [];
  for (const entry of value.split(/\s+/)) {
    let origin: string | null = null;
    try {
      const url = new URL(entry);
      if (
        ['http:', 'https:'].includes(url.protocol) &&
        url.origin === entry.replace(/\/$/, '') &&
        CSP_HOST.test(url.hostname)
      ) {
        origin = url.origin;
      }
    } catch {
      origin = null;
    }
    if (origin === null) {
      reader.problems.push(
        `${name} must be origins separated by spaces (like https://portal.example.com), got "${entry}"`,
      );
      return [];
    }
    origins.push(origin);
  }
  return origins;
}

function parseTelemetry(reader: Reader): TelemetryConfig {
  const sampler = reader.oneOf('OTEL_TRACES_SAMPLER', TRACE_SAMPLERS, 'parentbased_always_on');
  const arg = reader.raw('OTEL_TRACES_SAMPLER_ARG');
  let samplerRatio = 1;
  if (arg !== undefined) {
    // Only the ratio samplers take an argument; for the others it is ignored, as the
    // specification says, but a ratio that is not one is still refused.
    const ratio = Number(arg);
    if (!/^\d+(\.\d+)?$/.test(arg) || ratio > 1) {
      reader.problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${arg}"`);
    } else {
      samplerRatio = ratio;
    }
  }
  return {
    endpoint: reader.raw('OTEL_EXPORTER_OTLP_ENDPOINT')
      ? reader.url('OTEL_EXPORTER_OTLP_ENDPOINT', '', ['http:', 'https:'])
      : null,
    protocol: reader.oneOf('OTEL_EXPORTER_OTLP_PROTOCOL', OTLP_PROTOCOLS, 'http/protobuf'),
    serviceName: reader.string('OTEL_SERVICE_NAME', 'meeting-event-bridge'),
    sampler,
    samplerRatio,
  };
}

/** `host:port,…` of REDIS_SENTINELS or REDIS_CLUSTER_NODES; null when unset or malformed. */
function parseRedisNodes(reader: Reader, name: string): RedisNode[] | null {
  const value = reader.raw(name);
  if (value === undefined) return null;
  const nodes: RedisNode[] = [];
  for (const entry of value.split(',').map((e) => e.trim())) {
    const found = /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/.exec(entry);
    const port = found ? Number(found[2]) : 0;
    if (!found || port < 1 || port > 65535) {
      reader.problems.push(`${name} must be comma-separated host:port entries, got "${entry}"`);
      return null;
    }
    nodes.push({ host: found[1].replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}

/**
 * Redis by URL, through Sentinel, or as a Cluster (docs/configuration.md#redis): Sentinel or
 * Cluster when set, in place of REDIS_URL (which keeps its default in .env files); never both.
 */
function parseRedis(r: Reader): AppConfig['redis'] {
  const url = r.url('REDIS_URL', 'redis://localhost:6379', ['redis:', 'rediss:']);
  const sentinels = parseRedisNodes(r, 'REDIS_SENTINELS');
  const sentinelName = r.optional('REDIS_SENTINEL_NAME');
  const clusterNodes = parseRedisNodes(r, 'REDIS_CLUSTER_NODES');
  const password = r.optional('REDIS_PASSWORD');
  const prefix = r.string('QUEUE_PREFIX', 'meb');
  // The service puts hash tags ({…}) in its keys itself (docs/operations.md#redis-keys).
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(prefix)) {
    r.problems.push(`QUEUE_PREFIX must be 1-64 characters of letters, digits, . _ : -`);
  }
  if (r.raw('REDIS_SENTINELS') !== undefined && r.raw('REDIS_CLUSTER_NODES') !== undefined) {
    r.problems.push('REDIS_CLUSTER_NODES cannot be set with REDIS_SENTINELS: set one of them');
  }
  if (r.raw('REDIS_SENTINELS') !== undefined && sentinelName === null) {
    r.problems.push('REDIS_SENTINEL_NAME must be set with REDIS_SENTINELS');
  }
  if (r.raw('REDIS_SENTINELS') === undefined && sentinelName !== null) {
    r.problems.push('REDIS_SENTINELS must be set with REDIS_SENTINEL_NAME');
  }
  if (password !== null && sentinels === null && clusterNodes === null) {
    r.problems.push(
      'REDIS_PASSWORD is for REDIS_SENTINELS or REDIS_CLUSTER_NODES: put the password in REDIS_URL',
    );
  }
  return {
    url,
    prefix,
    sentinel: sentinels && sentinelName ? { nodes: sentinels, name: sentinelName } : null,
    cluster: clusterNodes ? { nodes: clusterNodes } : null,
    password,
  };
}

/** Reads and validates every variable of docs/configuration.md from the given environment. */
export function loadConfig(env: Env): AppConfig {
  const r = new Reader(env);
  const nodeEnv = r.string('NODE_ENV', 'development');
  const production = nodeEnv === 'production';
  const roleName: AppRoleName = r.oneOf('APP_ROLE', APP_ROLES, 'all');

  const tokenSecret = r.raw('AUTH_TOKEN_SECRET');
  if (tokenSecret === undefined) {
    r.require('AUTH_TOKEN_SECRET', production);
  } else if (tokenSecret.length < 32) {
    r.problems.push('AUTH_TOKEN_SECRET must be at least 32 characters');
  }

  const port = r.int('PORT', 3000, 1, 65535);
  const clients = parseClients(r, 'AUTH_CLIENTS');
  const brokers = parseBrokers(r, 'DESTINATION_BROKERS');
  checkNamespacesApart(r, brokers, clients);
  const config: AppConfig = {
    nodeEnv,
    production,
    port,
    role: { name: roleName, api: roleName !== 'worker', worker: roleName !== 'api' },
    logLevel: r.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    shutdownTimeoutMs: r.int('SHUTDOWN_TIMEOUT_MS', 25000, 0, 600000),
    http: httpTimeouts(r),
    // X-Forwarded-For is caller-controlled unless a known number of proxies sits in front.
    trustProxy: r.int('TRUST_PROXY_HOPS', 0, 0, 10) || false,
    database: {
      url: r.url('DATABASE_URL', 'postgres://postgres@localhost:5432/postgres', [
        'postgres:',
        'postgresql:',
      ]),
      migrationsRun: r.bool('DATABASE_MIGRATIONS_RUN', true),
    },
    redis: parseRedis(r),
    auth: {
      tokenSecret: tokenSecret ?? DEV_AUTH_TOKEN_SECRET,
      tokenTtlSeconds: r.int('AUTH_TOKEN_TTL_SECONDS', 3600, 60, 86400),
      clients,
    },
    secretsEncryptionKey: parseKey(r, 'SECRETS_ENCRYPTION_KEY', production),
    zoom: {
      webhookSecretTokens: parseSecretTokens(r, 'ZOOM_WEBHOOK_SECRET_TOKEN'),
      webhookToleranceSeconds: r.int('ZOOM_WEBHOOK_TOLERANCE_SECONDS', 300, 1, 86400),
      accountId: r.optional('ZOOM_ACCOUNT_ID'),
      clientId: r.optional('ZOOM_CLIENT_ID'),
      clientSecret: r.optional('ZOOM_CLIENT_SECRET'),
      oauthUrl: r.url('ZOOM_OAUTH_URL', 'https://zoom.us', ['http:', 'https:']),
      apiUrl: r.url('ZOOM_API_URL', 'https://api.zoom.us/v2', ['http:', 'https:']),
      timeoutMs: r.int('ZOOM_TIMEOUT_MS', 15000, 100, 600000),
      app: {
        clientId: r.optional('ZOOM_APP_CLIENT_ID'),
        clientSecret: r.optional('ZOOM_APP_CLIENT_SECRET'),
        redirectUrl:
          r.optional('ZOOM_APP_REDIRECT_URL') === null
            ? null
            : r.url('ZOOM_APP_REDIRECT_URL', '', ['http:', 'https:']),
      },
      ws: {
        subscriptionId: r.optional('ZOOM_WS_SUBSCRIPTION_ID'),
        url: r.url('ZOOM_WS_URL', 'wss://ws.zoom.us/ws', ['ws:', 'wss:']),
        heartbeatMs: r.int('ZOOM_WS_HEARTBEAT_MS', 30000, 100, 600000),
      },
    },
    reconcile: {
      intervalMs: r.int('RECONCILE_INTERVAL_MS', 900000, 0, 7 * 86400000),
      lookbackMs: r.int('RECONCILE_LOOKBACK_MS', 93600000, 60000, 31 * 86400000),
      settleMs: r.int('RECONCILE_SETTLE_MS', 5400000, 0, 7 * 86400000),
      gapDelayMs: r.int('RECONCILE_GAP_DELAY_MS', 300000, 0, 86400000),
      maxRps: r.int('RECONCILE_MAX_RPS', 2, 1, 100),
      runTimeoutMs: r.int('RECONCILE_RUN_TIMEOUT_MS', 1800000, 1000, 7 * 86400000),
    },
    attendance: {
      settleMs: r.int('ATTENDANCE_SETTLE_MS', 600000, 0, 7 * 86400000),
    },
    delivery: {
      maxRetries: r.int('DELIVERY_MAX_RETRIES', 3, 0, 20),
      backoffMs: r.int('DELIVERY_BACKOFF_MS', 30000, 0, 86400000),
      timeoutMs: r.int('DELIVERY_TIMEOUT_MS', 10000, 100, 600000),
      concurrency: r.int('DELIVERY_CONCURRENCY', 50, 1, 1000),
      sweepIntervalMs: r.int('DELIVERY_SWEEP_INTERVAL_MS', 30000, 100, 3600000),
      concurrencyPerWebhook: r.int('DELIVERY_CONCURRENCY_PER_WEBHOOK', 10, 1, 1000),
    },
    webhooks: {
      disableAfterFailures: r.int('WEBHOOK_DISABLE_AFTER_FAILURES', 100, 0, 1000000),
      perClient: r.int('WEBHOOKS_PER_CLIENT', 100, 1, 1000000),
    },
    retention: {
      days: r.int('RETENTION_DAYS', 30, 1, 3650),
      intervalMs: r.int('RETENTION_INTERVAL_MS', 3600000, 1000, 86400000),
      partitionDays: r.int('PARTITION_DAYS', 1, 1, 365),
    },
    recordingFileTypes: parseFileTypes(r, 'RECORDING_FILE_TYPES'),
    recordingAutomation: {
      maxRetries: r.int('RECORDING_AUTOMATION_MAX_RETRIES', 3, 0, 20),
      backoffMs: r.int('RECORDING_AUTOMATION_BACKOFF_MS', 5000, 0, 3600000),
    },
    inboundSweep: {
      intervalMs: r.int('INBOUND_SWEEP_INTERVAL_MS', 30000, 100, 3600000),
      graceMs: r.int('INBOUND_SWEEP_GRACE_MS', 60000, 0, 86400000),
    },
    webhookAllowPrivateUrls: r.bool('WEBHOOK_ALLOW_PRIVATE_URLS', false),
    webhookSecretGraceSeconds: r.int('WEBHOOK_SECRET_GRACE_SECONDS', 86400, 0, 30 * 86400),
    destinationBrokers: brokers,
    chat: { extraHosts: parseHosts(r, 'CHAT_EXTRA_HOSTS') },
    templateTimeoutMs: r.int('TEMPLATE_TIMEOUT_MS', 50, 1, 10000),
    publicBaseUrl: r.url('PUBLIC_BASE_URL', `http://localhost:${port}`, ['http:', 'https:']),
    telemetry: parseTelemetry(r),
    console: {
      enabled: r.bool('CONSOLE_ENABLED', true),
      frameAncestors: parseOrigins(r, 'CONSOLE_FRAME_ANCESTORS'),
    },
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/** The one place that touches process.env. */
export function loadConfigFromProcess(): AppConfig {
  return loadConfig(process.env);
}

/**
 * The `meb` CLI's one setting from the environment: where its profiles live (XDG_CONFIG_HOME,
 * empty for ~/.config). Read here so that src/config stays the only reader of process.env.
 */
export function cliConfigHomeFromProcess(): string | undefined {
  return process.env.XDG_CONFIG_HOME;
}
