/**
 * Static checks of the deployment files in docker/: the Kubernetes manifests against the
 * Kubernetes API schemas and our policies, the Dockerfile, .dockerignore and the compose file.
 * Needs no running app, Docker engine, cluster or network.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { SCOPES } from '../src/config/config.types';
import { loadConfig } from '../src/config/load-config';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Job } from 'kubernetes-models/batch/v1';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';

const ROOT = path.join(__dirname, '..');
const DOCKER_DIR = path.join(ROOT, 'docker');
const K8S_DIR = path.join(DOCKER_DIR, 'k8s');

// SPEC §1 says these may never be renamed, so the list is fixed here rather than read at run time.
const SPEC_ENV = [
  'PORT',
  'APP_ROLE',
  'DATABASE_URL',
  'DATABASE_MIGRATIONS_RUN',
  'REDIS_URL',
  'AUTH_TOKEN_SECRET',
  'AUTH_TOKEN_TTL_SECONDS',
  'AUTH_CLIENTS',
  'SECRETS_ENCRYPTION_KEY',
  'ZOOM_WEBHOOK_SECRET_TOKEN',
  'ZOOM_WEBHOOK_TOLERANCE_SECONDS',
  'ZOOM_ACCOUNT_ID',
  'ZOOM_CLIENT_ID',
  'ZOOM_CLIENT_SECRET',
  'ZOOM_OAUTH_URL',
  'ZOOM_API_URL',
  'DELIVERY_MAX_RETRIES',
  'DELIVERY_BACKOFF_MS',
  'DELIVERY_TIMEOUT_MS',
  'DELIVERY_CONCURRENCY',
  'RECORDING_FILE_TYPES',
  'WEBHOOK_ALLOW_PRIVATE_URLS',
];
const EXTRA_ENV = ['LOG_LEVEL', 'QUEUE_PREFIX', 'SHUTDOWN_TIMEOUT_MS'];
const SECRET_ENV = [
  'AUTH_TOKEN_SECRET',
  'SECRETS_ENCRYPTION_KEY',
  'AUTH_CLIENTS',
  'ZOOM_WEBHOOK_SECRET_TOKEN',
  'ZOOM_CLIENT_SECRET',
  'DATABASE_URL',
];
const MIGRATION_COMMAND = [
  'node',
  'node_modules/typeorm/cli.js',
  'migration:run',
  '-d',
  'dist/database/data-source.js',
];
const API = 'meeting-event-bridge-api';
const WORKER = 'meeting-event-bridge-worker';
const MIGRATION_JOB = 'meeting-event-bridge-migrate';
const APP_PORT = 3000;
const DRAIN_LIMIT_SECONDS = 25;

// ---------------------------------------------------------------------------
// Kubernetes schema validation
// ---------------------------------------------------------------------------

interface Manifest {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: string };
  [field: string]: unknown;
}

interface LoadedManifest {
  file: string;
  doc: Manifest;
}

type ModelClass = new (data: never) => { validate(): void };

// Every kind the manifests may use. A kind missing here fails validation instead of being skipped.
const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

const KUSTOMIZATION_KIND = 'kustomize.config.k8s.io/v1beta1/Kustomization';

function kindKey(doc: Manifest): string {
  return `${String(doc.apiVersion)}/${String(doc.kind)}`;
}

function loadYamlDocuments(file: string): Manifest[] {
  const text = fs.readFileSync(file, 'utf8');
  return parseAllDocuments(text).flatMap((document): Manifest[] => {
    const problems = [...document.errors, ...document.warnings];
    if (problems.length > 0) {
      throw new Error(`${file}: ${problems.map((p) => p.message).join('; ')}`);
    }
    const value: unknown = document.toJS();
    // A trailing `---` yields an empty document, which kubectl ignores too.
    return value === null || value === undefined ? [] : [value as Manifest];
  });
}

function loadK8sManifests(): LoadedManifest[] {
  return fs
    .readdirSync(K8S_DIR)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .flatMap((file) => loadYamlDocuments(path.join(K8S_DIR, file)).map((doc) => ({ file, doc })));
}

// The upstream OpenAPI schema (checked by kubernetes-models' compiled ajv validators) catches
// wrong types, missing required fields and bad formats.
function schemaErrors(doc: Manifest): string[] {
  const Model = MODELS[kindKey(doc)];
  if (!Model) {
    return [`no schema known for apiVersion/kind ${kindKey(doc)}`];
  }
  try {
    new Model(doc as never).validate();
    return [];
  } catch (error) {
    const details = (error as { errors?: { instancePath: string; message?: string }[] }).errors;
    return details
      ? details.map((e) => `schema: ${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
      : [`schema: ${(error as Error).message}`];
  }
}

// The upstream schema allows unknown fields, but the API server rejects them (kubectl
// --validate=strict, the default). A typo such as `readinesProbe` would otherwise pass silently,
// so each manifest is also type-checked, as an object literal, against the interfaces generated
// from the same OpenAPI document: TypeScript's excess-property check reports unknown fields at
// any depth.
function unknownFieldErrors(docs: Manifest[]): string[][] {
  const fileName = path.join(__dirname, '__k8s_manifests__.ts');
  const lines: string[] = [];
  const owners: number[] = [];
  const push = (text: string, owner: number): void => {
    for (const line of text.split('\n')) {
      lines.push(line);
      owners.push(owner);
    }
  };
  docs.forEach((doc, index) => {
    if (MODELS[kindKey(doc)]) {
      const typesModule = `kubernetes-models/${String(doc.apiVersion)}/${String(doc.kind)}`;
      push(`import type { I${String(doc.kind)} as T${index} } from '${typesModule}';`, -1);
    }
  });
  docs.forEach((doc, index) => {
    if (MODELS[kindKey(doc)]) {
      push(`export const m${index}: T${index} = ${JSON.stringify(doc, null, 2)};`, index);
    }
  });
  const source = lines.join('\n');

  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) =>
    name === fileName
      ? ts.createSourceFile(name, source, languageVersion, true)
      : getSourceFile(name, languageVersion, ...rest);
  host.fileExists = (name) => name === fileName || fileExists(name);
  host.readFile = (name) => (name === fileName ? source : readFile(name));

  const program = ts.createProgram([fileName], options, host);
  const result: string[][] = docs.map(() => []);
  for (const diagnostic of ts.getPreEmitDiagnostics(program, program.getSourceFile(fileName))) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const line =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line
        : -1;
    const owner = line >= 0 ? owners[line] : -1;
    if (owner < 0) {
      // The check itself is broken (for example the package layout changed): fail loudly.
      throw new Error(`manifest type check could not run: ${message}`);
    }
    result[owner].push(`fields: ${message} (at ${lines[line].trim()})`);
  }
  return result;
}

function validateManifests(docs: Manifest[]): string[][] {
  const unknownFields = unknownFieldErrors(docs);
  return docs.map((doc, index) => [...schemaErrors(doc), ...unknownFields[index]]);
}

// ---------------------------------------------------------------------------
// Helpers for the policy checks
// ---------------------------------------------------------------------------

const loaded = loadK8sManifests();
const apiObjects = loaded.filter(({ doc }) => kindKey(doc) !== KUSTOMIZATION_KIND);
const docs = apiObjects.map(({ doc }) => doc);

function findAll<T>(apiVersion: string, kind: string): T[] {
  return docs.filter((d) => d.apiVersion === apiVersion && d.kind === kind) as T[];
}

function findOne<T extends { metadata?: { name?: string } }>(
  apiVersion: string,
  kind: string,
  name: string,
): T {
  const found = findAll<T>(apiVersion, kind).filter((d) => d.metadata?.name === name);
  if (found.length !== 1) {
    throw new Error(`expected exactly one ${kind} ${name} in docker/k8s, found ${found.length}`);
  }
  return found[0];
}

const configMaps = (): IConfigMap[] => findAll<IConfigMap>('v1', 'ConfigMap');
const secrets = (): ISecret[] => findAll<ISecret>('v1', 'Secret');

function secretKeys(secret: ISecret): string[] {
  return [...Object.keys(secret.stringData ?? {}), ...Object.keys(secret.data ?? {})];
}

function podSpec(name: string): IPodSpec {
  const spec = findOne<IDeployment>('apps/v1', 'Deployment', name).spec?.template.spec;
  if (!spec) throw new Error(`Deployment ${name} has no pod spec`);
  return spec;
}

function appContainer(spec: IPodSpec): IContainer {
  expect(spec.containers).toHaveLength(1);
  return spec.containers[0];
}

// The environment the process will see: envFrom sources in order (a later one wins), then env.
function effectiveEnv(container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const map = configMaps().find((c) => c.metadata?.name === source.configMapRef?.name);
      if (!map) throw new Error(`ConfigMap ${source.configMapRef.name} is not in docker/k8s`);
      Object.assign(env, map.data ?? {});
    }
    if (source.secretRef) {
      const secret = secrets().find((s) => s.metadata?.name === source.secretRef?.name);
      if (!secret) throw new Error(`Secret ${source.secretRef.name} is not in docker/k8s`);
      for (const key of secretKeys(secret)) env[key] = secret.stringData?.[key] ?? '(secret)';
    }
  }
  for (const variable of container.env ?? []) env[variable.name] = variable.value ?? '(ref)';
  return env;
}

function resolvePort(container: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function httpGetOf(probe: IProbe | undefined): {
  path?: string;
  port?: number | string;
} {
  if (!probe?.httpGet) throw new Error('expected an httpGet probe');
  return probe.httpGet;
}

function selects(selector: Record<string, string> | undefined, labels: Record<string, string>) {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}

function podLabels(name: string): Record<string, string> {
  return findOne<IDeployment>('apps/v1', 'Deployment', name).spec?.template.metadata?.labels ?? {};
}

function preStopSleepSeconds(container: IContainer): number {
  const command = container.lifecycle?.preStop?.exec?.command ?? [];
  return command[0] === 'sleep' ? Number(command[1]) : 0;
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

describe('docker/k8s manifests: Kubernetes schemas', () => {
  let results: string[][];

  beforeAll(() => {
    results = validateManifests(docs);
  });

  it('finds the expected manifests', () => {
    expect(apiObjects.map(({ doc }) => kindKey(doc)).sort()).toEqual(
      [
        'apps/v1/Deployment',
        'apps/v1/Deployment',
        'autoscaling/v2/HorizontalPodAutoscaler',
        'batch/v1/Job',
        'policy/v1/PodDisruptionBudget',
        'v1/ConfigMap',
        'v1/Secret',
        'v1/Service',
      ].sort(),
    );
  });

  it.each(apiObjects.map(({ file, doc }, index) => ({ file, doc, index })))(
    '$file ($doc.kind $doc.metadata.name) is valid',
    ({ index }) => {
      expect(results[index]).toEqual([]);
    },
  );

  it('has no namespace, so the manifests apply to any namespace', () => {
    for (const doc of docs) {
      expect((doc.metadata as { namespace?: string } | undefined)?.namespace).toBeUndefined();
    }
  });
});

describe('docker/k8s manifests: the validation rejects broken copies', () => {
  const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  let broken: Record<string, string[]>;

  beforeAll(() => {
    const wrongReplicas = clone(findOne<IDeployment>('apps/v1', 'Deployment', WORKER));
    (wrongReplicas.spec as unknown as Record<string, unknown>).replicas = 'two';

    const typoField = clone(findOne<IDeployment>('apps/v1', 'Deployment', API));
    const typoContainer = typoField.spec?.template.spec?.containers[0] as unknown as Record<
      string,
      unknown
    >;
    typoContainer.readinesProbe = typoContainer.readinessProbe;
    delete typoContainer.readinessProbe;

    const unnamedContainer = clone(findOne<IJob>('batch/v1', 'Job', MIGRATION_JOB));
    delete (
      unnamedContainer.spec?.template.spec?.containers[0] as unknown as Record<string, unknown>
    ).name;

    const numericConfigValue = clone(configMaps()[0]);
    (numericConfigValue.data as unknown as Record<string, unknown>).PORT = 3000;

    const unknownKind: Manifest = {
      apiVersion: 'v1',
      kind: 'Pood',
      metadata: { name: 'x' },
    };

    const cases = {
      wrongReplicas,
      typoField,
      unnamedContainer,
      numericConfigValue,
      unknownKind,
    };
    const errors = validateManifests(Object.values(cases) as Manifest[]);
    broken = Object.fromEntries(Object.keys(cases).map((key, i) => [key, errors[i]]));
  });

  it('rejects a wrong type (replicas: "two")', () => {
    expect(broken.wrongReplicas.join('\n')).toMatch(/\/spec\/replicas must be integer/);
  });

  it('rejects an unknown field in a container (readinesProbe)', () => {
    expect(broken.typoField.join('\n')).toMatch(/^fields: .*readinesProbe/m);
  });

  it('rejects a container without its required name', () => {
    expect(broken.unnamedContainer.join('\n')).toMatch(
      /containers\/0 must have required property name/,
    );
  });

  it('rejects a non-string ConfigMap value, as the API server does', () => {
    expect(broken.numericConfigValue.join('\n')).toMatch(/\/data\/PORT must be string/);
  });

  it('rejects a kind it has no schema for', () => {
    expect(broken.unknownKind).toEqual(['no schema known for apiVersion/kind v1/Pood']);
  });
});

describe('docker/k8s manifests: policies', () => {
  describe.each([
    { name: API, role: 'api' },
    { name: WORKER, role: 'worker' },
  ])('Deployment $name', ({ name, role }) => {
    const deployment = () => findOne<IDeployment>('apps/v1', 'Deployment', name);
    const spec = () => podSpec(name);
    const container = () => appContainer(spec());

    it(`runs APP_ROLE=${role} and never runs migrations itself`, () => {
      const env = effectiveEnv(container());
      expect(env.APP_ROLE).toBe(role);
      expect(env.DATABASE_MIGRATIONS_RUN).toBe('false');
    });

    it('gets its configuration from the ConfigMap and the Secret', () => {
      const sources = container().envFrom ?? [];
      expect(sources.some((s) => s.configMapRef)).toBe(true);
      expect(sources.some((s) => s.secretRef)).toBe(true);
      const env = effectiveEnv(container());
      for (const variable of [...SPEC_ENV, ...EXTRA_ENV]) expect(env).toHaveProperty(variable);
    });

    it('probes readiness on /health/ready and liveness on /health/live, on the app port', () => {
      const c = container();
      const readiness = httpGetOf(c.readinessProbe);
      const liveness = httpGetOf(c.livenessProbe);
      expect(readiness.path).toBe('/health/ready');
      expect(liveness.path).toBe('/health/live');
      expect(resolvePort(c, readiness.port)).toBe(APP_PORT);
      expect(resolvePort(c, liveness.port)).toBe(APP_PORT);
      if (c.startupProbe) {
        expect(httpGetOf(c.startupProbe).path).toBe('/health/live');
      }
      expect(effectiveEnv(c).PORT).toBe(String(APP_PORT));
    });

    it('sets resource requests and limits for CPU and memory', () => {
      const { requests, limits } = container().resources ?? {};
      for (const resource of ['cpu', 'memory']) {
        expect(requests?.[resource]).toBeDefined();
        expect(limits?.[resource]).toBeDefined();
      }
    });

    it('runs as a non-root user on a read-only root filesystem, without privileges', () => {
      const pod = spec().securityContext ?? {};
      const c = container().securityContext ?? {};
      expect(c.runAsNonRoot ?? pod.runAsNonRoot).toBe(true);
      expect(c.runAsUser ?? pod.runAsUser).toBe(1000);
      expect(c.readOnlyRootFilesystem).toBe(true);
      expect(c.allowPrivilegeEscalation).toBe(false);
      expect(c.capabilities?.drop).toContain('ALL');
      expect((c.seccompProfile ?? pod.seccompProfile)?.type).toBe('RuntimeDefault');
      expect(spec().automountServiceAccountToken).toBe(false);
    });

    it('mounts a writable emptyDir on /tmp', () => {
      const mount = container().volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect(mount).toBeDefined();
      const volume = spec().volumes?.find((v) => v.name === mount?.name);
      expect(volume?.emptyDir).toBeDefined();
    });

    it('gives SIGTERM enough time: grace period > preStop pause + the app drain limit', () => {
      const grace = spec().terminationGracePeriodSeconds ?? 30;
      const env = effectiveEnv(container());
      const drainSeconds = Number(env.SHUTDOWN_TIMEOUT_MS) / 1000;
      expect(drainSeconds).toBeGreaterThanOrEqual(DRAIN_LIMIT_SECONDS);
      // In-flight deliveries time out before the drain limit, so a drain can finish them.
      expect(Number(env.DELIVERY_TIMEOUT_MS) / 1000).toBeLessThan(drainSeconds);
      expect(grace).toBeGreaterThan(DRAIN_LIMIT_SECONDS);
      expect(grace).toBeGreaterThan(preStopSleepSeconds(container()) + drainSeconds);
    });

    it('selects exactly its own pods', () => {
      const selector = deployment().spec?.selector.matchLabels;
      expect(selects(selector, podLabels(name))).toBe(true);
      const other = name === API ? WORKER : API;
      expect(selects(selector, podLabels(other))).toBe(false);
    });
  });

  it('API pods pause before SIGTERM so endpoints are removed first', () => {
    expect(preStopSleepSeconds(appContainer(podSpec(API)))).toBeGreaterThanOrEqual(3);
  });

  it('API Deployment leaves the replica count to the HorizontalPodAutoscaler', () => {
    expect(findOne<IDeployment>('apps/v1', 'Deployment', API).spec?.replicas).toBeUndefined();
  });

  it('API, worker and migration Job run the same image', () => {
    const job = findOne<IJob>('batch/v1', 'Job', MIGRATION_JOB);
    const images = new Set([
      appContainer(podSpec(API)).image,
      appContainer(podSpec(WORKER)).image,
      job.spec?.template.spec?.containers[0].image,
    ]);
    expect(images.size).toBe(1);
    expect([...images][0]).not.toMatch(/:latest$/);
  });

  it('migration Job runs the TypeORM CLI once, with the app configuration', () => {
    const job = findOne<IJob>('batch/v1', 'Job', MIGRATION_JOB);
    const spec = job.spec?.template.spec;
    expect(spec?.restartPolicy).toBe('Never');
    expect(job.spec?.backoffLimit).toEqual(expect.any(Number));
    const container = appContainer(spec as IPodSpec);
    expect(container.command).toEqual(MIGRATION_COMMAND);
    const env = effectiveEnv(container);
    expect(env).toHaveProperty('DATABASE_URL');
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(container.securityContext?.allowPrivilegeEscalation).toBe(false);
    expect(container.securityContext?.runAsNonRoot ?? spec?.securityContext?.runAsNonRoot).toBe(
      true,
    );
    expect(container.resources?.limits).toBeDefined();
  });

  it('Service selects API pods only and maps port 80 to the app port', () => {
    const service = findOne<IService>('v1', 'Service', API);
    expect(selects(service.spec?.selector, podLabels(API))).toBe(true);
    expect(selects(service.spec?.selector, podLabels(WORKER))).toBe(false);
    const [port] = service.spec?.ports ?? [];
    expect(port.port).toBe(80);
    expect(resolvePort(appContainer(podSpec(API)), port.targetPort)).toBe(APP_PORT);
  });

  it('PodDisruptionBudget keeps one API pod and selects API pods only', () => {
    const [pdb] = findAll<IPodDisruptionBudget>('policy/v1', 'PodDisruptionBudget');
    expect(pdb.spec?.minAvailable).toBe(1);
    expect(selects(pdb.spec?.selector?.matchLabels, podLabels(API))).toBe(true);
    expect(selects(pdb.spec?.selector?.matchLabels, podLabels(WORKER))).toBe(false);
  });

  it('HorizontalPodAutoscaler scales the API Deployment on CPU, from at least two pods', () => {
    const [hpa] = findAll<IHorizontalPodAutoscaler>('autoscaling/v2', 'HorizontalPodAutoscaler');
    expect(hpa.spec?.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: API,
    });
    // With one pod the PodDisruptionBudget (minAvailable 1) would block every node drain.
    expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec?.maxReplicas).toBeGreaterThanOrEqual(hpa.spec?.minReplicas ?? 1);
    const cpu = hpa.spec?.metrics?.find((m) => m.type === 'Resource' && m.resource?.name === 'cpu');
    expect(cpu?.resource?.target.type).toBe('Utilization');
  });

  describe('ConfigMap and Secret template', () => {
    const configKeys = () => configMaps().flatMap((c) => Object.keys(c.data ?? {}));
    const templateKeys = () => secrets().flatMap(secretKeys);

    it('together cover every variable of SPEC §1 and the operational extras', () => {
      const covered = new Set([...configKeys(), ...templateKeys()]);
      const missing = [...SPEC_ENV, ...EXTRA_ENV].filter((name) => !covered.has(name));
      expect(missing).toEqual([]);
    });

    it('keep secrets in the Secret and nothing else there', () => {
      expect(templateKeys().sort()).toEqual([...SECRET_ENV].sort());
      expect(configKeys().filter((key) => SECRET_ENV.includes(key))).toEqual([]);
    });

    it('hold only placeholders in the Secret template', () => {
      for (const secret of secrets()) {
        expect(secret.data).toBeUndefined();
        for (const [key, value] of Object.entries(secret.stringData ?? {})) {
          expect(`${key}=${value}`).toContain('CHANGE_ME');
        }
      }
    });

    it('disable migrations at start for every pod that reads the ConfigMap', () => {
      const [config] = configMaps();
      expect(config.data?.DATABASE_MIGRATIONS_RUN).toBe('false');
    });
  });

  it('kustomization.yaml lists every long-lived manifest, but not the Secret template or the Job', () => {
    const [kustomization] = loaded.filter(({ doc }) => kindKey(doc) === KUSTOMIZATION_KIND);
    expect(kustomization).toBeDefined();
    const resources = (kustomization.doc.resources as string[]).slice().sort();
    const expected = [...new Set(apiObjects.map(({ file }) => file))]
      .filter((file) => {
        const kinds = apiObjects.filter((o) => o.file === file).map((o) => o.doc.kind);
        return !kinds.includes('Secret') && !kinds.includes('Job');
      })
      .sort();
    expect(resources).toEqual(expected);
  });
});

// ---------------------------------------------------------------------------
// Dockerfile and .dockerignore
// ---------------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
}

// Enough of the Dockerfile grammar for these files: comments, blank lines and `\` continuations.
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = '';
    const match = /^(\S+)\s*([\s\S]*)$/.exec(full);
    if (match)
      instructions.push({
        keyword: match[1].toUpperCase(),
        args: match[2].trim(),
      });
  }
  return instructions;
}

function stages(instructions: Instruction[]): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') result.push([]);
    result[result.length - 1]?.push(instruction);
  }
  return result;
}

function execForm(args: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(args);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

// Docker's matching rules, reduced to what .dockerignore files use: `*`, `**`, `?`, `!`,
// and a matched directory taking its contents with it. The last matching line wins.
function dockerIgnored(patterns: string[], file: string): boolean {
  const toRegExp = (pattern: string): RegExp => {
    const body = pattern
      .replace(/^\/+|\/+$/g, '')
      .split('/')
      .map((part) =>
        part === '**'
          ? '.*'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/');
    return new RegExp(`^${body}(/.*)?$`);
  };
  let ignored = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (toRegExp(negated ? pattern.slice(1) : pattern).test(file)) ignored = !negated;
  }
  return ignored;
}

describe('docker/Dockerfile', () => {
  const instructions = parseDockerfile(
    fs.readFileSync(path.join(DOCKER_DIR, 'Dockerfile'), 'utf8'),
  );
  const all = stages(instructions);
  const build = all[0] ?? [];
  const runtime = all[all.length - 1] ?? [];
  const args = (stage: Instruction[], keyword: string) =>
    stage.filter((i) => i.keyword === keyword).map((i) => i.args);

  it('is multi-stage, on node:20-bookworm-slim', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const from of args(instructions, 'FROM')) {
      expect(from.split(/\s+/)[0]).toBe('node:20-bookworm-slim');
    }
  });

  it('builds with npm ci, npm run build and drops dev dependencies', () => {
    const run = args(build, 'RUN').join('\n');
    expect(run).toMatch(/\bnpm ci\b/);
    expect(run).toMatch(/\bnpm run build\b/);
    expect(run).toMatch(/\bnpm prune --omit=dev\b/);
  });

  it('ships only package.json, production node_modules and dist in the final stage', () => {
    const copies = args(runtime, 'COPY');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) expect(copy).toMatch(/^--from=\S+\s/);
    const sources = copies.map((c) => c.split(/\s+/)[1]).sort();
    expect(sources).toEqual(['/app/dist', '/app/node_modules', '/app/package.json']);
  });

  it('runs the final stage as a numeric non-root USER', () => {
    const users = args(runtime, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const match = /^(\d+)(?::(\d+))?$/.exec(users[users.length - 1]);
    expect(match).not.toBeNull();
    expect(Number(match?.[1])).toBeGreaterThan(0);
  });

  it('sets NODE_ENV=production in the final stage', () => {
    const env = args(runtime, 'ENV').join('\n');
    expect(env).toMatch(/(^|\s)NODE_ENV=("?)production\2(\s|$)|^NODE_ENV\s+production$/m);
  });

  it('starts node directly in exec form, so SIGTERM reaches the process', () => {
    const commands = args(runtime, 'CMD');
    expect(commands.length).toBeGreaterThan(0);
    const command = execForm(commands[commands.length - 1]);
    expect(command).toEqual(['node', 'dist/main.js']);
    for (const entrypoint of args(runtime, 'ENTRYPOINT')) {
      expect(execForm(entrypoint)).toBeDefined();
    }
  });

  it('exposes port 3000', () => {
    const ports = args(runtime, 'EXPOSE').flatMap((a) => a.split(/\s+/));
    expect(ports.map((p) => p.replace(/\/tcp$/, ''))).toContain(String(APP_PORT));
  });

  it('has a HEALTHCHECK on /health/live that needs only node', () => {
    const [healthcheck] = args(runtime, 'HEALTHCHECK');
    expect(healthcheck).toBeDefined();
    const command = execForm(healthcheck.replace(/^(--\S+\s+)*CMD\s+/, ''));
    expect(command?.[0]).toBe('node');
    expect(command?.join(' ')).toContain('/health/live');
  });

  describe('.dockerignore', () => {
    const patterns = fs
      .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));

    it.each(['node_modules', 'dist', '.git', '.env', '.env.local', 'coverage', 'reports', 'bench'])(
      'keeps %s out of the build context',
      (file) => {
        expect(dockerIgnored(patterns, file)).toBe(true);
      },
    );

    it('keeps everything the build stage copies', () => {
      const sources = args(build, 'COPY')
        .filter((copy) => !copy.startsWith('--from='))
        .flatMap((copy) =>
          copy
            .split(/\s+/)
            .filter((part) => !part.startsWith('--'))
            .slice(0, -1),
        );
      expect(sources).toEqual(expect.arrayContaining(['package.json', 'src']));
      for (const source of [...sources, 'src/main.ts']) {
        expect({ source, ignored: dockerIgnored(patterns, source) }).toEqual({
          source,
          ignored: false,
        });
      }
    });
  });
});

// ---------------------------------------------------------------------------
// docker/compose.yml
// ---------------------------------------------------------------------------

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
});
