/**
 * Static checks of docker/compose.yml: services, health-gated start order, one-shot
 * migrations, drain time, and local-only values the production config accepts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parse } from 'yaml';
import { SCOPES } from '../src/config/config.types';
import { loadConfig } from '../src/config/load-config';
import { DOCKER_DIR, DRAIN_LIMIT_SECONDS, MIGRATION_COMMAND } from './support/deploy-files';

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition?: string }>;
  ports?: string[];
  stop_grace_period?: string;
}

function durationSeconds(value: string | undefined): number {
  const match = /^(\d+)(ms|s|m)?$/.exec(value ?? '');
  if (!match) return 10; // Compose's default stop_grace_period
  const factor = { ms: 0.001, s: 1, m: 60 }[match[2] ?? 's'] ?? 1;
  return Number(match[1]) * factor;
}

describe('docker/compose.yml', () => {
  // Compose supports YAML merge keys (`<<: *anchor`), so the parser must too.
  const compose = parse(fs.readFileSync(path.join(DOCKER_DIR, 'compose.yml'), 'utf8'), {
    merge: true,
  }) as { services: Record<string, ComposeService> };
  const services = compose.services;
  const appServices = Object.entries(services).filter(([, s]) => s.build);
  const isMigration = (s: ComposeService) =>
    (Array.isArray(s.command) ? s.command.join(' ') : (s.command ?? '')).includes('migration:run');
  const longRunning = appServices.filter(([, s]) => !isMigration(s));
  const env = (s: ComposeService) =>
    Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));

  it('has PostgreSQL 16 and Redis 7 with healthchecks', () => {
    expect(services.postgres?.image).toMatch(/^postgres:16/);
    expect(services.redis?.image).toMatch(/^redis:7/);
    expect(services.postgres?.healthcheck?.test).toBeDefined();
    expect(services.redis?.healthcheck?.test).toBeDefined();
  });

  it('builds the app from the repository root with docker/Dockerfile', () => {
    expect(appServices.length).toBeGreaterThan(0);
    for (const [, service] of appServices) {
      expect(service.build).toEqual({
        context: '..',
        dockerfile: 'docker/Dockerfile',
      });
      const context = path.join(DOCKER_DIR, service.build?.context ?? '');
      expect(fs.existsSync(path.join(context, service.build?.dockerfile ?? ''))).toBe(true);
    }
  });

  it('starts the app only once PostgreSQL and Redis are healthy', () => {
    for (const [, service] of longRunning) {
      expect(service.depends_on?.postgres?.condition).toBe('service_healthy');
      expect(service.depends_on?.redis?.condition).toBe('service_healthy');
    }
  });

  it('runs migrations once, in a one-shot service the others wait for', () => {
    const migrations = appServices.filter(([, s]) => isMigration(s));
    expect(migrations).toHaveLength(1);
    const [[migrateName, migrate]] = migrations;
    expect(migrate.command).toEqual(MIGRATION_COMMAND);
    expect(migrate.depends_on?.postgres?.condition).toBe('service_healthy');
    for (const [, service] of longRunning) {
      expect(service.depends_on?.[migrateName]?.condition).toBe('service_completed_successfully');
      expect(env(service).DATABASE_MIGRATIONS_RUN).toBe('false');
    }
  });

  it('runs an api service on port 3000 and a worker service', () => {
    const roles = longRunning.map(([, s]) => env(s).APP_ROLE).sort();
    expect(roles).toEqual(['api', 'worker']);
    const [[, api]] = longRunning.filter(([, s]) => env(s).APP_ROLE === 'api');
    expect(api.ports).toContainEqual(expect.stringMatching(/(^|:)3000:3000$/));
  });

  it('gives the app time to drain on stop', () => {
    for (const [, service] of longRunning) {
      expect(durationSeconds(service.stop_grace_period)).toBeGreaterThan(DRAIN_LIMIT_SECONDS);
    }
  });

  it('wires the database, Redis and local-only secrets the production config accepts, with every scope (the dashboard too)', () => {
    for (const [, service] of appServices) {
      const e = env(service);
      expect(e.DATABASE_URL).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
      expect(e.REDIS_URL).toBe('redis://redis:6379');
      expect(e.AUTH_TOKEN_SECRET).toMatch(/local/);
      expect(Buffer.from(e.SECRETS_ENCRYPTION_KEY, 'base64')).toHaveLength(32);
      // The image runs with NODE_ENV=production: the real loader must accept every value.
      const config = loadConfig({ ...e, NODE_ENV: 'production' });
      expect(config.auth.clients.flatMap((c) => c.scopes)).toEqual(
        expect.arrayContaining([...SCOPES]),
      );
    }
  });

  it('sends the traces of the api and worker to a Jaeger service over OTLP/HTTP, its UI published', () => {
    const jaeger = services.jaeger;
    expect(jaeger?.image).toMatch(/^jaegertracing\/all-in-one:\d+\.\d+\.\d+$/);
    expect(env(jaeger).COLLECTOR_OTLP_ENABLED).toBe('true');
    expect(jaeger.ports).toContainEqual(expect.stringMatching(/(^|:)16686:16686$/));
    for (const [, service] of longRunning) {
      const config = loadConfig({ ...env(service), NODE_ENV: 'production' });
      expect(config.telemetry).toMatchObject({
        endpoint: 'http://jaeger:4318',
        protocol: 'http/protobuf',
      });
      expect(service.depends_on?.jaeger?.condition).toBe('service_started');
    }
  });
});
