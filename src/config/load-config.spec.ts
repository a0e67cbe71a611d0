import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError, DEV_AUTH_TOKEN_SECRET, Env, loadConfig } from './load-config';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('reads Redis through Sentinel or as a Cluster instead of REDIS_URL', () => {
    const sentinel = loadConfig({
      REDIS_SENTINELS: 'sentinel-0:26379, [::1]:26380',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_PASSWORD: 'pw',
    }).redis;
    expect(sentinel).toMatchObject({
      sentinel: {
        nodes: [
          { host: 'sentinel-0', port: 26379 },
          { host: '::1', port: 26380 },
        ],
        name: 'mymaster',
      },
      cluster: null,
      password: 'pw',
    });
    const cluster = loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:6379,redis-1:6379' }).redis;
    expect(cluster).toMatchObject({
      sentinel: null,
      cluster: {
        nodes: [
          { host: 'redis-0', port: 6379 },
          { host: 'redis-1', port: 6379 },
        ],
      },
      password: null,
    });
    expect(loadConfig({}).redis).toMatchObject({ sentinel: null, cluster: null, password: null });
  });

  it('applies the documented defaults (docs/configuration.md) to an empty environment', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.role).toEqual({ name: 'all', api: true, worker: true });
    expect(config.database).toEqual({
      url: 'postgres://postgres@localhost:5432/postgres',
      migrationsRun: true,
    });
    expect(config.redis.url).toBe('redis://localhost:6379');
    expect(config.auth.tokenSecret).toBe(DEV_AUTH_TOKEN_SECRET);
    expect(config.auth.tokenTtlSeconds).toBe(3600);
    expect(config.auth.clients).toEqual([]);
    expect(config.secretsEncryptionKey).toHaveLength(32);
    expect(config.zoom.webhookSecretTokens).toEqual([]);
    expect(config.zoom.webhookToleranceSeconds).toBe(300);
    expect(config.zoom.oauthUrl).toBe('https://zoom.us');
    expect(config.zoom.apiUrl).toBe('https://api.zoom.us/v2');
    expect(config.delivery).toEqual({
      maxRetries: 3,
      backoffMs: 30000,
      timeoutMs: 10000,
      concurrency: 50,
      sweepIntervalMs: 30000,
      concurrencyPerWebhook: 10,
    });
    expect(config.webhooks).toEqual({ disableAfterFailures: 100, perClient: 100 });
    expect(config.retention).toEqual({ days: 30, intervalMs: 3600000, partitionDays: 1 });
    expect(config.recordingFileTypes).toBeNull();
    expect(config.webhookAllowPrivateUrls).toBe(false);
    expect(config.webhookSecretGraceSeconds).toBe(86400);
    expect(config.chat).toEqual({ extraHosts: [] });
    expect(config.templateTimeoutMs).toBe(50);
    expect(config.zoom.app).toEqual({ clientId: null, clientSecret: null, redirectUrl: null });
    expect(config.attendance.settleMs).toBe(600000);
    expect(config.reconcile.runTimeoutMs).toBe(1800000);
    expect(config.trustProxy).toBe(false);
    expect(config.http).toEqual({
      headersTimeoutMs: 10000,
      requestTimeoutMs: 30000,
      maxConnections: 1000,
    });
  });

  it('reads the HTTP timeouts and refuses a headers limit above the request limit', () => {
    expect(
      loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '5000' }).http,
    ).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 5000, maxConnections: 1000 });
    expect(
      problemsOf({ HTTP_HEADERS_TIMEOUT_MS: '6000', HTTP_REQUEST_TIMEOUT_MS: '5000' }),
    ).toEqual(['HTTP_HEADERS_TIMEOUT_MS (6000) must not exceed HTTP_REQUEST_TIMEOUT_MS (5000)']);
  });

  it('reads roles, clients, file types and booleans', () => {
    const config = loadConfig({
      APP_ROLE: 'worker',
      DATABASE_MIGRATIONS_RUN: 'false',
      AUTH_CLIENTS:
        '[{"client_id":"ops","client_secret":"0123456789abcdef","scopes":"webhooks:read webhooks:write"}]',
      RECORDING_FILE_TYPES: 'mp4, TRANSCRIPT',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    });
    expect(config.role).toEqual({ name: 'worker', api: false, worker: true });
    expect(config.database.migrationsRun).toBe(false);
    expect(config.auth.clients).toEqual([
      {
        clientId: 'ops',
        clientSecret: '0123456789abcdef',
        scopes: ['webhooks:read', 'webhooks:write'],
        accounts: '*',
      },
    ]);
    expect(config.recordingFileTypes).toEqual(['MP4', 'TRANSCRIPT']);
    expect(config.webhookAllowPrivateUrls).toBe(true);
    expect(config.secretsEncryptionKey).toEqual(Buffer.alloc(32, 7));
  });

  it('reads the chat hosts and the template bound', () => {
    const config = loadConfig({
      CHAT_EXTRA_HOSTS: ' Chat-Proxy.example.com:8443 , 127.0.0.1:9000',
      TEMPLATE_TIMEOUT_MS: '200',
    });
    expect(config.chat.extraHosts).toEqual(['chat-proxy.example.com:8443', '127.0.0.1:9000']);
    expect(config.templateTimeoutMs).toBe(200);
  });

  it('reads the platform accounts a client holds, every one when absent', () => {
    const clients = (accounts: unknown) =>
      loadConfig({
        NODE_ENV: 'test',
        AUTH_CLIENTS: JSON.stringify([
          { client_id: 'c', client_secret: '0123456789abcdef', scopes: 'webhooks:read', accounts },
        ]),
      }).auth.clients[0].accounts;
    expect(clients(undefined)).toBe('*');
    expect(clients('*')).toBe('*');
    expect(clients(['a1', 'a2', 'a1'])).toEqual(['a1', 'a2']);
    expect(() => clients('a1')).toThrow(/AUTH_CLIENTS\[0\]\.accounts/);
    expect(() => clients([1])).toThrow(/AUTH_CLIENTS\[0\]\.accounts/);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DELIVERY_MAX_RETRIES: '-1' }, 'DELIVERY_MAX_RETRIES'],
    [{ DELIVERY_BACKOFF_MS: '1.5' }, 'DELIVERY_BACKOFF_MS'],
    [{ DELIVERY_CONCURRENCY: '0' }, 'DELIVERY_CONCURRENCY'],
    [{ DELIVERY_SWEEP_INTERVAL_MS: '10' }, 'DELIVERY_SWEEP_INTERVAL_MS'],
    [{ DATABASE_URL: 'nonsense' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL'],
    [{ REDIS_SENTINELS: 'a:26379,b', REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINELS: 'a:26379' }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_SENTINEL_NAME: 'm' }, 'REDIS_SENTINELS'],
    [{ REDIS_CLUSTER_NODES: 'a:70000' }, 'REDIS_CLUSTER_NODES'],
    [
      { REDIS_CLUSTER_NODES: 'a:7000', REDIS_SENTINELS: 'b:26379', REDIS_SENTINEL_NAME: 'm' },
      'REDIS_CLUSTER_NODES',
    ],
    [{ REDIS_PASSWORD: 'secret' }, 'REDIS_PASSWORD'],
    [{ QUEUE_PREFIX: 'meb{x}' }, 'QUEUE_PREFIX'],
    [{ APP_ROLE: 'both' }, 'APP_ROLE'],
    [{ DATABASE_MIGRATIONS_RUN: 'maybe' }, 'DATABASE_MIGRATIONS_RUN'],
    [{ AUTH_CLIENTS: '{not json' }, 'AUTH_CLIENTS'],
    [{ AUTH_CLIENTS: '{"client_id":"x"}' }, 'AUTH_CLIENTS'],
    [
      { AUTH_CLIENTS: '[{"client_id":"ops","client_secret":"short","scopes":"webhooks:read"}]' },
      'AUTH_CLIENTS[0].client_secret',
    ],
    [
      { AUTH_CLIENTS: '[{"client_id":"ops","client_secret":"0123456789abcdef","scopes":"admin"}]' },
      'AUTH_CLIENTS[0].scopes',
    ],
    [
      { AUTH_CLIENTS: '[{"client_secret":"0123456789abcdef","scopes":"webhooks:read"}]' },
      'AUTH_CLIENTS[0].client_id',
    ],
    [{ AUTH_TOKEN_SECRET: 'too-short' }, 'AUTH_TOKEN_SECRET'],
    [{ SECRETS_ENCRYPTION_KEY: 'c2hvcnQ=' }, 'SECRETS_ENCRYPTION_KEY'],
    [{ ZOOM_API_URL: 'ftp://zoom' }, 'ZOOM_API_URL'],
    [{ ZOOM_WEBHOOK_TOLERANCE_SECONDS: '0' }, 'ZOOM_WEBHOOK_TOLERANCE_SECONDS'],
    [{ RECORDING_FILE_TYPES: 'MP4,../x' }, 'RECORDING_FILE_TYPES'],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: 'sure' }, 'WEBHOOK_ALLOW_PRIVATE_URLS'],
    [{ WEBHOOK_SECRET_GRACE_SECONDS: '-1' }, 'WEBHOOK_SECRET_GRACE_SECONDS'],
    [{ WEBHOOK_SECRET_GRACE_SECONDS: '2592001' }, 'WEBHOOK_SECRET_GRACE_SECONDS'],
    [{ TRUST_PROXY_HOPS: 'all' }, 'TRUST_PROXY_HOPS'],
    [{ CHAT_EXTRA_HOSTS: 'https://proxy.example.com/' }, 'CHAT_EXTRA_HOSTS'],
    [{ TEMPLATE_TIMEOUT_MS: '0' }, 'TEMPLATE_TIMEOUT_MS'],
    [{ DESTINATION_BROKERS: '{"name":"bus"}' }, 'DESTINATION_BROKERS'],
    [
      { DESTINATION_BROKERS: '[{"name":"bus","type":"kafka","url":"kafka://h"}]' },
      'DESTINATION_BROKERS[0].type',
    ],
    [
      { DESTINATION_BROKERS: '[{"name":"bus","type":"rabbitmq","url":"nats://h:4222"}]' },
      'DESTINATION_BROKERS[0].url',
    ],
    [
      { DESTINATION_BROKERS: '[{"name":"","type":"nats","url":"nats://h"}]' },
      'DESTINATION_BROKERS[0].name',
    ],
    [
      {
        DESTINATION_BROKERS:
          '[{"name":"a","type":"nats","url":"nats://h"},{"name":"a","type":"nats","url":"nats://g"}]',
      },
      'DESTINATION_BROKERS[1].name',
    ],
    [
      { DESTINATION_BROKERS: '[{"name":"a","type":"nats","url":"nats://h","user":"x"}]' },
      'DESTINATION_BROKERS[0]',
    ],
    [{ CONSOLE_ENABLED: 'perhaps' }, 'CONSOLE_ENABLED'],
    [{ CONSOLE_FRAME_ANCESTORS: "'self'" }, 'CONSOLE_FRAME_ANCESTORS'],
    [{ CONSOLE_FRAME_ANCESTORS: 'https://a.example.com/path' }, 'CONSOLE_FRAME_ANCESTORS'],
    [{ CONSOLE_FRAME_ANCESTORS: 'https://a.example.com; script-src *' }, 'CONSOLE_FRAME_ANCESTORS'],
    [
      { CONSOLE_FRAME_ANCESTORS: 'https://portal.example.com;script-src' },
      'CONSOLE_FRAME_ANCESTORS',
    ],
    [{ CONSOLE_FRAME_ANCESTORS: 'https://a.example.com,b.example.com' }, 'CONSOLE_FRAME_ANCESTORS'],
  ])('rejects %j naming %s', (env, name) => {
    const problems = problemsOf(env as Record<string, string>);
    expect(problems).toHaveLength(1);
    expect(problems[0].startsWith(`${name} `)).toBe(true);
  });

  it('reads DESTINATION_BROKERS, and never quotes a broker URL (it may hold a password)', () => {
    const brokers = [
      { name: 'bus', type: 'rabbitmq', url: 'amqp://guest:guest@127.0.0.1:5672/vh' },
      { name: 'stream', type: 'nats', url: 'nats://127.0.0.1:4222' },
    ];
    expect(loadConfig({ DESTINATION_BROKERS: JSON.stringify(brokers) }).destinationBrokers).toEqual(
      brokers.map((b) => ({ ...b, namespace: 'client', prefix: 'meb.' })),
    );
    expect(loadConfig({}).destinationBrokers).toEqual([]);
    const bad = problemsOf({
      DESTINATION_BROKERS: '[{"name":"bus","type":"rabbitmq","url":"http://u:s3cret@h"}]',
    });
    expect(bad.join('\n')).not.toContain('s3cret');
  });

  it('reads how clients share each broker: namespace client (prefix meb.) unless told otherwise', () => {
    const read = (extra: object) =>
      loadConfig({
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: 'amqp://h', ...extra },
        ]),
      }).destinationBrokers[0];
    expect(read({ prefix: 'bridge.prod.' })).toMatchObject({
      namespace: 'client',
      prefix: 'bridge.prod.',
    });
    expect(read({ prefix: '' })).toMatchObject({ namespace: 'client', prefix: '' });
    expect(read({ namespace: 'shared' })).toMatchObject({ namespace: 'shared' });
    const problems = (extra: object) =>
      problemsOf({
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: 'amqp://h', ...extra },
        ]),
      });
    expect(problems({ namespace: 'tenant' })).toEqual([
      'DESTINATION_BROKERS[0].namespace must be one of client, shared',
    ]);
    for (const prefix of ['meb', 'amq.', '_INBOX.', '$JS.', 'a..', 'a b.', 7]) {
      expect(problems({ prefix })).toEqual([
        expect.stringMatching(/^DESTINATION_BROKERS\[0\]\.prefix must be/),
      ]);
    }
    expect(problems({ namespace: 'shared', prefix: 'x.' })).toEqual([
      'DESTINATION_BROKERS[0].prefix applies only to "namespace": "client"',
    ]);
  });

  it('refuses client ids whose broker parts would overlap (a, a.b), unless every broker is shared', () => {
    const clients = JSON.stringify([
      { client_id: 'a', client_secret: 'a-secret-0123456789', scopes: 'webhooks:read' },
      { client_id: 'a.b', client_secret: 'b-secret-0123456789', scopes: 'webhooks:read' },
    ]);
    const broker = (namespace: string) =>
      JSON.stringify([{ name: 'bus', type: 'nats', url: 'nats://h', namespace }]);
    expect(problemsOf({ AUTH_CLIENTS: clients, DESTINATION_BROKERS: broker('client') })).toEqual([
      expect.stringMatching(/^AUTH_CLIENTS: client ids "a" and "a.b" would share a part/),
    ]);
    const shared = loadConfig({ AUTH_CLIENTS: clients, DESTINATION_BROKERS: broker('shared') });
    expect(shared.auth.clients).toHaveLength(2);
  });

  it('serves the console framed by no one unless CONSOLE_FRAME_ANCESTORS lists origins', () => {
    expect(loadConfig({}).console).toEqual({ enabled: true, frameAncestors: [] });
    expect(
      loadConfig({
        CONSOLE_ENABLED: 'false',
        CONSOLE_FRAME_ANCESTORS: ' https://portal.example.com  http://localhost:8080/ ',
      }).console,
    ).toEqual({
      enabled: false,
      frameAncestors: ['https://portal.example.com', 'http://localhost:8080'],
    });
  });

  it('requires both secrets in production, naming each', () => {
    const problems = problemsOf({ NODE_ENV: 'production' });
    expect(problems).toEqual([
      'AUTH_TOKEN_SECRET is required when NODE_ENV=production',
      'SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production',
    ]);
  });

  it('accepts production with both secrets set', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      AUTH_TOKEN_SECRET: 'x'.repeat(40),
      SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
    });
    expect(config.production).toBe(true);
    expect(config.secretsEncryptionKey).toEqual(Buffer.alloc(32, 0xab));
  });

  it.each([
    ['ZOOM_WEBHOOK_SECRET_TOKEN', 'CHANGE_ME'],
    ['ZOOM_CLIENT_SECRET', 'CHANGE_ME'],
    [
      'DATABASE_URL',
      'postgres://meeting_event_bridge:CHANGE_ME@postgres:5432/meeting_event_bridge',
    ],
    ['REDIS_URL', 'redis://:changeme@redis:6379'],
    ['AUTH_TOKEN_SECRET', 'CHANGE_ME'],
    ['SECRETS_ENCRYPTION_KEY', 'CHANGE_ME'],
    ['AUTH_CLIENTS', 'CHANGE_ME'],
    [
      'AUTH_CLIENTS',
      '[{"client_id":"crm","client_secret":"REPLACE_ME_0123456789","scopes":"webhooks:read"}]',
    ],
  ])('refuses a placeholder left in %s, naming the variable and nothing else', (name, value) => {
    const productionSecrets = {
      NODE_ENV: 'production',
      AUTH_TOKEN_SECRET: 'x'.repeat(40),
      SECRETS_ENCRYPTION_KEY: 'ab'.repeat(32),
    };
    // In production too, where a refused required secret must not also be reported as missing.
    for (const base of [{}, productionSecrets]) {
      const problems = problemsOf({ ...base, [name]: value });
      expect(problems).toEqual([
        expect.stringMatching(new RegExp(`^${name} still holds the placeholder "[A-Za-z_]+"`)),
      ]);
      // Only the placeholder is quoted: the rest of a URL or client list may be real secrets.
      expect(problems[0]).not.toMatch(/postgres:5432|redis:6379|crm/);
    }
  });

  it('refuses the placeholders of the Kubernetes Secret template, naming each variable', () => {
    const template = parse(
      readFileSync(join(__dirname, '..', '..', 'docker', 'k8s', 'secret.yaml'), 'utf8'),
    ) as { stringData: Record<string, string> };
    const problems = problemsOf({ NODE_ENV: 'production', ...template.stringData });
    expect(problems.sort()).toEqual(
      Object.keys(template.stringData)
        .sort()
        .map((name) => expect.stringMatching(new RegExp(`^${name} still holds the placeholder`))),
    );
  });

  it('accepts secrets that merely look alike', () => {
    const config = loadConfig({
      ZOOM_WEBHOOK_SECRET_TOKEN: 'change-management-token',
      ZOOM_CLIENT_SECRET: 'aChAnGe_mX',
    });
    expect(config.zoom.webhookSecretTokens).toEqual(['change-management-token']);
  });

  it('reads several comma-separated secret tokens and refuses an empty one', () => {
    expect(
      loadConfig({ ZOOM_WEBHOOK_SECRET_TOKEN: 'first-app-token, second-app-token' }).zoom
        .webhookSecretTokens,
    ).toEqual(['first-app-token', 'second-app-token']);
    expect(problemsOf({ ZOOM_WEBHOOK_SECRET_TOKEN: 'one,,two' })).toEqual([
      'ZOOM_WEBHOOK_SECRET_TOKEN must be one secret token or several separated by commas',
    ]);
  });

  it('reports every bad variable at once', () => {
    expect(problemsOf({ PORT: 'abc', APP_ROLE: 'x', REDIS_URL: 'nope' })).toHaveLength(3);
  });
});

/** Every variable loadConfig looks up, recorded as it reads them: the list is the code's own. */
function variablesRead(...envs: Env[]): string[] {
  const read = new Set<string>();
  for (const env of envs) {
    const recording = new Proxy(env, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return typeof name === 'string' ? target[name] : undefined;
      },
    });
    try {
      loadConfig(recording);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
    }
  }
  return [...read].sort();
}

describe('.env.example', () => {
  const lines = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8').split('\n');
  const assignments = lines.flatMap((line, index) => {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    return match ? [{ name: match[1], value: match[2], index }] : [];
  });

  it('lists exactly the variables the config reads, each once', () => {
    const read = variablesRead({}, { NODE_ENV: 'production' });
    // Not vacuous: the recording sees the reads.
    expect(read).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'ZOOM_OAUTH_URL']));
    expect(assignments.map((a) => a.name).sort()).toEqual(read);
  });

  it('gives every variable a meaning on the comment line just above it', () => {
    const undescribed = assignments
      .filter(({ index }) => !/^# (?!---)\S/.test(lines[index - 1] ?? ''))
      .map((a) => a.name);
    expect(undescribed).toEqual([]);
  });

  it('shows the defaults: its values configure exactly what an empty environment does', () => {
    const example = Object.fromEntries(assignments.map((a) => [a.name, a.value]));
    expect(loadConfig(example)).toEqual(loadConfig({}));
  });
});
