export const APP_ROLES = ['all', 'api', 'worker'] as const;
export type AppRoleName = (typeof APP_ROLES)[number];

export const SCOPES = [
  'webhooks:read',
  'webhooks:write',
  'meetings:read',
  'meetings:write',
  'users:read',
  'recordings:read',
  'recordings:write',
  'webinars:read',
  'webinars:write',
  'users:write',
  'reports:read',
  // The operator's: inbound status and reconciliation (docs/inbound-sources.md).
  'bridge:admin',
  // Meeting attendance (docs/attendance.md).
  'attendance:read',
  // Install and remove platform accounts (docs/accounts.md).
  'accounts:write',
  // Not in docs/api.md#tokens-and-scopes's list: the operators' queue dashboard (/admin/queues), which can retry,
  // clean and pause jobs, so no API client gets it by accident.
  'queues:admin',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * How the API clients share a broker (docs/destinations.md#clients-sharing-a-broker):
 * `client`, each in its own part (exchanges or subjects beginning `<prefix><client_id>.`);
 * `shared`, the operator's opt-out for a broker that serves one tenant.
 */
export const BROKER_NAMESPACES = ['client', 'shared'] as const;
export type BrokerNamespace = (typeof BROKER_NAMESPACES)[number];
export const DEFAULT_BROKER_PREFIX = 'meb.';

/**
 * The broker types DESTINATION_BROKERS may name, with the URL schemes each takes (docs/
 * destinations.md). Plain data on the lowest floor, so the loader checks an entry without
 * knowing the destinations; each broker destination type takes its schemes from here, and
 * src/destinations/registry.spec.ts holds the registry's broker types equal to these.
 */
export const BROKER_SCHEMES = {
  rabbitmq: ['amqp:', 'amqps:'],
  nats: ['nats:', 'tls:'],
} as const satisfies Record<string, readonly string[]>;
export type BrokerTypeName = keyof typeof BROKER_SCHEMES;

/** A message broker the operator lets webhooks deliver to (docs/destinations.md); clients name it. */
export interface BrokerConfig {
  name: string;
  /**
   * A broker type of the destination registry (docs/destinations.md), checked by the loader.
   * A string here: the registry's types know the configuration, not the other way round.
   */
  type: string;
  /** Of a scheme its type's provider accepts (amqp(s):// for rabbitmq…); may carry credentials. */
  url: string;
  namespace: BrokerNamespace;
  /** What every client's part begins with, before its client id (`client` namespace only). */
  prefix: string;
}

/** OTEL_TRACES_SAMPLER values, as the OpenTelemetry specification names them. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** docs/operations.md: traces, exported only while `endpoint` is set. */
export interface TelemetryConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT without its trailing slash; null: tracing off. */
  endpoint: string | null;
  protocol: OtlpProtocol;
  serviceName: string;
  sampler: TraceSamplerName;
  /** The ratio of the *traceidratio samplers (OTEL_TRACES_SAMPLER_ARG), 0 to 1. */
  samplerRatio: number;
}

export interface ApiClientConfig {
  clientId: string;
  clientSecret: string;
  scopes: Scope[];
  /**
   * The platform accounts whose events and passthrough the client holds beside those it
   * installed (docs/accounts.md): `'*'` every account (the default), else these ids.
   */
  accounts: '*' | string[];
}

/** One `host:port` of REDIS_SENTINELS or REDIS_CLUSTER_NODES. */
export interface RedisNode {
  host: string;
  port: number;
}

export interface AppConfig {
  nodeEnv: string;
  production: boolean;
  port: number;
  role: { name: AppRoleName; api: boolean; worker: boolean };
  logLevel: string;
  shutdownTimeoutMs: number;
  /** Slow clients are cut off (408): headers, and the whole request, must arrive within these. */
  http: { headersTimeoutMs: number; requestTimeoutMs: number; maxConnections: number };
  /** Express `trust proxy`: false, or how many proxy hops to trust for the client address. */
  trustProxy: false | number;
  database: { url: string; migrationsRun: boolean };
  /**
   * Redis: `url` unless `sentinel` or `cluster` is set (docs/configuration.md#redis). `prefix`
   * (QUEUE_PREFIX) starts every key the service writes.
   */
  redis: {
    url: string;
    prefix: string;
    sentinel: { nodes: RedisNode[]; name: string } | null;
    cluster: { nodes: RedisNode[] } | null;
    /** REDIS_PASSWORD: the Sentinel group's or Cluster's password (a URL carries its own). */
    password: string | null;
  };
  auth: { tokenSecret: string; tokenTtlSeconds: number; clients: ApiClientConfig[] };
  /** 32-byte key for AES-256-GCM encryption of subscription secrets. */
  secretsEncryptionKey: Buffer;
  zoom: {
    /** ZOOM_WEBHOOK_SECRET_TOKEN, split at commas: an event verifying with any is accepted; empty = unset. */
    webhookSecretTokens: string[];
    webhookToleranceSeconds: number;
    accountId: string | null;
    clientId: string | null;
    clientSecret: string | null;
    oauthUrl: string;
    apiUrl: string;
    timeoutMs: number;
    /**
     * The platform OAuth app that accounts install (docs/accounts.md); installs answer 503
     * while clientId or clientSecret or redirectUrl is null.
     */
    app: { clientId: string | null; clientSecret: string | null; redirectUrl: string | null };
    /** The platform's event socket (docs/inbound-sources.md); off while subscriptionId is null. */
    ws: { subscriptionId: string | null; url: string; heartbeatMs: number };
  };
  /** Reconciliation of what the platform never delivered (docs/reconciliation.md). */
  reconcile: {
    /** How often the scheduled run starts; 0: never. */
    intervalMs: number;
    lookbackMs: number;
    settleMs: number;
    gapDelayMs: number;
    /** Platform requests per second across all processes. */
    maxRps: number;
    /** Longest one run may take from its start before it is ended `failed`. */
    runTimeoutMs: number;
  };
  /** Meeting attendance (docs/attendance.md). */
  attendance: {
    /** How long after an occurrence's last stored input its attendance is computed. */
    settleMs: number;
  };
  delivery: {
    maxRetries: number;
    backoffMs: number;
    timeoutMs: number;
    concurrency: number;
    /** How often the sweeper looks for due deliveries that the queue lost. */
    sweepIntervalMs: number;
    /** Most attempts in flight to one webhook per worker process (docs/api.md#receiver-health fairness). */
    concurrencyPerWebhook: number;
  };
  /** Receiver health and limits of docs/api.md#receiver-health. */
  webhooks: {
    /** Consecutive failed deliveries that disable a webhook; 0 never disables. */
    disableAfterFailures: number;
    perClient: number;
  };
  /** partitionDays: width of a history table's time partition (docs/operations.md#partitions). */
  retention: { days: number; intervalMs: number; partitionDays: number };
  /** Upper-case recording file types to keep; null keeps all. */
  recordingFileTypes: string[] | null;
  /** Retries of the recording automation job and its first backoff (doubling). */
  recordingAutomation: { maxRetries: number; backoffMs: number };
  /** Re-queues stored inbound events whose job was lost: how often, and from what age. */
  inboundSweep: { intervalMs: number; graceMs: number };
  webhookAllowPrivateUrls: boolean;
  /** How long a secret replaced by PATCH still signs deliveries (docs/receiving.md); 0: not at all. */
  webhookSecretGraceSeconds: number;
  /** DESTINATION_BROKERS: the brokers webhook destinations may name. */
  destinationBrokers: BrokerConfig[];
  /**
   * Chat destinations (docs/destinations.md#chat-tools): CHAT_EXTRA_HOSTS, lower-case `host` or
   * `host:port` accepted beside the tools' own hosts; TEMPLATE_TIMEOUT_MS, the longest a
   * template may run for one delivery.
   */
  chat: { extraHosts: string[] };
  templateTimeoutMs: number;
  /** Base URL clients use to reach this service (download links in notifications). */
  publicBaseUrl: string;
  telemetry: TelemetryConfig;
  /** The web console at /console (docs/console.md). */
  console: {
    enabled: boolean;
    /** Origins allowed to frame the console (CSP frame-ancestors); empty: none. */
    frameAncestors: string[];
  };
}
