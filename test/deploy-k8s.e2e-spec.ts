/**
 * Static checks of docker/k8s: every manifest against the Kubernetes API schemas, broken copies
 * refused by that validation, and our policies (roles, probes, hardening, drain time, config).
 * Needs no cluster or network.
 */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import {
  APP_PORT,
  K8S_DIR,
  K8S_KEDA_DIR,
  DRAIN_LIMIT_SECONDS,
  MIGRATION_COMMAND,
  envExampleVariables,
  startCommand,
} from './support/deploy-files';
import {
  KUSTOMIZATION_KIND,
  Manifest,
  kindKey,
  loadK8sManifests,
  validateManifests,
} from './support/k8s-manifests';

// docs/configuration.md says these may never be renamed, so the list is fixed here rather than read at run time.
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
  'WEBHOOK_SECRET_GRACE_SECONDS',
];
const EXTRA_ENV = ['LOG_LEVEL', 'QUEUE_PREFIX', 'SHUTDOWN_TIMEOUT_MS'];
const SECRET_ENV = [
  'AUTH_TOKEN_SECRET',
  'SECRETS_ENCRYPTION_KEY',
  'AUTH_CLIENTS',
  'ZOOM_WEBHOOK_SECRET_TOKEN',
  'ZOOM_CLIENT_SECRET',
  'ZOOM_APP_CLIENT_SECRET',
  'DATABASE_URL',
  'DESTINATION_BROKERS',
  'REDIS_PASSWORD',
];
const API = 'meeting-event-bridge-api';
const WORKER = 'meeting-event-bridge-worker';
const MIGRATION_JOB = 'meeting-event-bridge-migrate';

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
        'autoscaling/v2/HorizontalPodAutoscaler',
        'batch/v1/Job',
        'policy/v1/PodDisruptionBudget',
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

/** A Kubernetes memory quantity (`512Mi`, `1Gi`, `1G`, bytes) in MiB. */
function mebibytes(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  if (!match) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 };
  const factor = match[2] ? unit[match[2] as keyof typeof unit] : 1;
  return (Number(match[1]) * factor) / 2 ** 20;
}

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

    it("caps node's heap below the memory limit, with room for what lies outside it", () => {
      // The image's command unless the manifest gives its own (Kubernetes `command`/`args`).
      const c = container();
      const command = [...(c.command ?? []), ...(c.args ?? [])];
      const flags = command.length > 0 ? command : startCommand();
      const cap = flags.map((f) => /^--max-old-space-size=(\d+)$/.exec(f)?.[1]).find(Boolean);
      expect(cap).toBeDefined();
      const limitMiB = mebibytes(String(c.resources?.limits?.memory));
      // Young generation, code, buffers and sockets live outside the old generation's cap.
      expect(Number(cap)).toBeLessThanOrEqual(limitMiB * 0.8);
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

  it.each([
    [API, WORKER],
    [WORKER, API],
  ])('a PodDisruptionBudget keeps one %s pod and selects those pods only', (own, other) => {
    const pdb = findOne<IPodDisruptionBudget>('policy/v1', 'PodDisruptionBudget', own);
    expect(pdb.spec?.minAvailable).toBe(1);
    expect(selects(pdb.spec?.selector?.matchLabels, podLabels(own))).toBe(true);
    expect(selects(pdb.spec?.selector?.matchLabels, podLabels(other))).toBe(false);
  });

  it('worker Deployment leaves the replica count to its HorizontalPodAutoscaler', () => {
    expect(findOne<IDeployment>('apps/v1', 'Deployment', WORKER).spec?.replicas).toBeUndefined();
  });

  it('a HorizontalPodAutoscaler scales the workers on the depth of the deliveries and inbound queues', () => {
    const hpa = findOne<IHorizontalPodAutoscaler>(
      'autoscaling/v2',
      'HorizontalPodAutoscaler',
      WORKER,
    );
    expect(hpa.spec?.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: WORKER,
    });
    // Two at least: with one, the worker PodDisruptionBudget would block every node drain.
    expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(2);
    const watched = (hpa.spec?.metrics ?? []).map((m) => ({
      type: m.type,
      name: m.external?.metric.name,
      labels: m.external?.metric.selector?.matchLabels,
    }));
    // The gauge of src/metrics/metrics.service.ts, per queue and state.
    expect(watched).toEqual([
      { type: 'External', name: 'queue_jobs', labels: { queue: 'deliveries', state: 'waiting' } },
      { type: 'External', name: 'queue_jobs', labels: { queue: 'inbound', state: 'waiting' } },
    ]);
  });

  it('the ConfigMap shows the Sentinel and Cluster settings, unset', () => {
    const [config] = configMaps();
    for (const name of ['REDIS_SENTINELS', 'REDIS_SENTINEL_NAME', 'REDIS_CLUSTER_NODES']) {
      expect(config.data?.[name]).toBe('');
    }
  });

  it('HorizontalPodAutoscaler scales the API Deployment on CPU, from at least two pods', () => {
    const hpa = findOne<IHorizontalPodAutoscaler>('autoscaling/v2', 'HorizontalPodAutoscaler', API);
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

    it('together cover every variable of docs/configuration.md and the operational extras', () => {
      const covered = new Set([...configKeys(), ...templateKeys()]);
      const missing = [...SPEC_ENV, ...EXTRA_ENV].filter((name) => !covered.has(name));
      expect(missing).toEqual([]);
    });

    it('with NODE_ENV from the image, hold exactly the variables .env.example lists', () => {
      const held = [...configKeys(), ...templateKeys(), 'NODE_ENV'];
      expect(held.sort()).toEqual(envExampleVariables().sort());
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

  // kubectl is no prerequisite of the suite: where it is installed, the build itself is run.
  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  (kubectl.status === 0 ? it : it.skip)(
    '`kubectl kustomize docker/k8s` builds every listed object',
    () => {
      const built = spawnSync('kubectl', ['kustomize', K8S_DIR], { encoding: 'utf8' });
      expect(built.stderr).toBe('');
      expect(built.status).toBe(0);
      const kinds = parseAllDocuments(built.stdout).map((d) => kindKey(d.toJS() as Manifest));
      const listed = apiObjects
        .filter(({ doc }) => !['Secret', 'Job'].includes(String(doc.kind)))
        .map(({ doc }) => kindKey(doc));
      expect(kinds.sort()).toEqual(listed.sort());
    },
  );

  (kubectl.status === 0 ? it : it.skip)(
    '`kubectl kustomize docker/k8s-keda` builds the same with a KEDA ScaledObject in place of the worker HPA',
    () => {
      const built = spawnSync('kubectl', ['kustomize', K8S_KEDA_DIR], { encoding: 'utf8' });
      expect(built.stderr).toBe('');
      expect(built.status).toBe(0);
      const objects = parseAllDocuments(built.stdout).map((d) => d.toJS() as Manifest);
      const named = (doc: Manifest) => `${kindKey(doc)} ${doc.metadata?.name}`;
      const base = apiObjects
        .filter(({ doc }) => !['Secret', 'Job'].includes(String(doc.kind)))
        .map(({ doc }) => named(doc))
        .filter((name) => name !== `autoscaling/v2/HorizontalPodAutoscaler ${WORKER}`);
      expect(objects.map(named).sort()).toEqual(
        [...base, `keda.sh/v1alpha1/ScaledObject ${WORKER}`].sort(),
      );
      // What the worker HPA watches and how far it goes, as KEDA reads it from Prometheus.
      const hpa = findOne<IHorizontalPodAutoscaler>(
        'autoscaling/v2',
        'HorizontalPodAutoscaler',
        WORKER,
      );
      const scaled = objects.find((doc) => doc.kind === 'ScaledObject')!.spec as {
        scaleTargetRef: unknown;
        minReplicaCount: number;
        maxReplicaCount: number;
        triggers: { type: string; metadata: { query: string; threshold: string } }[];
        advanced: { horizontalPodAutoscalerConfig: { behavior: unknown } };
      };
      expect(scaled.scaleTargetRef).toEqual(hpa.spec?.scaleTargetRef);
      expect([scaled.minReplicaCount, scaled.maxReplicaCount]).toEqual([
        hpa.spec?.minReplicas,
        hpa.spec?.maxReplicas,
      ]);
      expect(scaled.advanced.horizontalPodAutoscalerConfig.behavior).toEqual(hpa.spec?.behavior);
      expect(scaled.triggers.map((t) => [t.type, t.metadata.query, t.metadata.threshold])).toEqual(
        (hpa.spec?.metrics ?? []).map((m) => {
          const { queue, state } = m.external?.metric.selector?.matchLabels ?? {};
          return [
            'prometheus',
            `max(queue_jobs{queue="${queue}",state="${state}"})`,
            m.external?.target.averageValue,
          ];
        }),
      );
    },
  );
});
