import { connect } from 'node:net';
import { AppConfig } from '../config/config.types';
import { START_RETRY_ATTEMPTS, START_RETRY_DELAY_MS } from '../database/start-retries';
import { redisShown } from '../redis/redis-connection';

/** What an error that stopped the start carries, from Node's sockets and from pg. */
interface StartError {
  code?: string;
  syscall?: string;
  address?: string;
  hostname?: string;
  port?: number;
  message?: string;
}

/** host:port/database of a connection URL, without its user or password. */
function where(url: string, defaultPort: number): { host: string; port: number; shown: string } {
  try {
    const u = new URL(url);
    const port = Number(u.port || defaultPort);
    return {
      host: u.hostname,
      port,
      shown: `${u.hostname}:${port}${u.pathname === '/' ? '' : u.pathname}`,
    };
  } catch {
    return { host: '', port: defaultPort, shown: '(unparsable URL)' };
  }
}

/** The Redis servers the start reaches first: REDIS_URL's, or the Sentinels, or the Cluster's nodes. */
function redisTargets(config: AppConfig): { host: string; port: number }[] {
  const nodes = config.redis.cluster?.nodes ?? config.redis.sentinel?.nodes;
  if (nodes) return nodes;
  const { host, port } = where(config.redis.url, 6379);
  return host ? [{ host, port }] : [];
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ECONNRESET: 'connection reset',
};

/** pg's SQLSTATE codes for what a start can meet, in words. */
const POSTGRES_REASONS: Record<string, string> = {
  '28P01': 'password authentication failed',
  '28000': 'the user is not allowed to connect',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'too many connections',
};

/**
 * One line that says why the process could not start and what to check, naming the variable
 * (PORT, DATABASE_URL, REDIS_URL or its Sentinel or Cluster variables); undefined when the error is none of those (then its own
 * message and stack are all there is).
 */
export function startupProblem(error: unknown, config: AppConfig): string | undefined {
  const e = (typeof error === 'object' && error !== null ? error : {}) as StartError;
  const code = e.code ?? '';
  if (e.syscall === 'listen' || code === 'EADDRINUSE') {
    if (code === 'EADDRINUSE') {
      return (
        `PORT ${config.port} is already in use (another npm start or npm run tryout?): ` +
        'stop that process, or set PORT to a free port'
      );
    }
    if (code === 'EACCES')
      return `PORT ${config.port} needs privileges to listen on: set PORT to 1024 or above`;
  }
  const database = where(config.database.url, 5432);
  const redis = redisShown(config.redis);
  const network = NETWORK_REASONS[code];
  const host = e.hostname ?? e.address;
  const matches = (target: { host: string; port: number }) =>
    (e.port === undefined || e.port === target.port) &&
    (host === undefined || host === target.host || target.host === 'localhost');
  if (
    network &&
    redisTargets(config).some(matches) &&
    !(e.port === database.port && matches(database))
  ) {
    return (
      `Redis at ${redis.where} (${redis.variable}) cannot be reached: ${network}. ` +
      `Check ${redis.variable} and that Redis is running and accepts connections`
    );
  }
  if (network && matches(database)) {
    return (
      `PostgreSQL at ${database.shown} (DATABASE_URL) cannot be reached: ${network}. ` +
      'Check DATABASE_URL and that PostgreSQL is running and accepts connections'
    );
  }
  const postgres = POSTGRES_REASONS[code];
  if (postgres) {
    return (
      `PostgreSQL at ${database.shown} (DATABASE_URL) refused the connection: ${postgres}. ` +
      'Check the user, password and database name in DATABASE_URL'
    );
  }
  return undefined;
}

/** How long the first look at PostgreSQL and Redis waits for a connection. */
const PROBE_MS = 1500;

/** Why nothing accepts a TCP connection at host:port, in words; undefined when something does. */
function unreachable(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reason: string | undefined) => {
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(PROBE_MS, () => done(`no connection within ${PROBE_MS} ms`));
    socket.once('connect', () => done(undefined));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      done(NETWORK_REASONS[error.code ?? ''] ?? error.message),
    );
  });
}

/** What the start says at once when PostgreSQL or Redis does not take connections. */
export interface DependencyWarnings {
  postgres?: string;
  redis?: string;
}

/**
 * A first look at PostgreSQL and Redis, before the application loads (which takes seconds):
 * one that takes no connection is said at once, naming its variable, its host without user or
 * password, and what the start does about it. PostgreSQL is waited for, then the start fails;
 * without Redis the service starts anyway, as /health/ready and the queues then say. Only TCP:
 * a wrong password is found, and said, by the clients themselves.
 */
export async function dependencyWarnings(config: AppConfig): Promise<DependencyWarnings> {
  const database = where(config.database.url, 5432);
  const redis = redisShown(config.redis);
  const [postgresDown, redisReasons] = await Promise.all([
    database.host ? unreachable(database.host, database.port) : undefined,
    Promise.all(redisTargets(config).map(({ host, port }) => unreachable(host, port))),
  ]);
  // Down only when none of the listed servers answers: a Sentinel or node away is theirs to handle.
  const redisDown = redisReasons.every(Boolean) ? redisReasons[0] : undefined;
  const seconds = ((START_RETRY_ATTEMPTS * START_RETRY_DELAY_MS) / 1000).toFixed(0);
  return {
    postgres:
      postgresDown &&
      `PostgreSQL at ${database.shown} (DATABASE_URL) does not answer: ${postgresDown}. Waiting ` +
        `for it (${START_RETRY_ATTEMPTS} tries ${START_RETRY_DELAY_MS / 1000} s apart, about ` +
        `${seconds} s), then the start fails. Check DATABASE_URL and that PostgreSQL is running`,
    redis:
      redisDown &&
      `Redis at ${redis.where} (${redis.variable}) does not answer: ${redisDown}. Starting ` +
        'without it: until it answers, /health/ready answers 503 and queued work waits (its ' +
        `client keeps trying). Check ${redis.variable} and that Redis is running`,
  };
}
