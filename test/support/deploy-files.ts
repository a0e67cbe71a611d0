/**
 * What the static checks of docker/ (test/deploy-*.e2e-spec.ts) share: where the files are and
 * the facts the image, the compose file and the Kubernetes manifests must agree on.
 */
import * as fs from 'fs';
import * as path from 'path';

export const ROOT = path.join(__dirname, '..', '..');
export const DOCKER_DIR = path.join(ROOT, 'docker');
export const K8S_DIR = path.join(DOCKER_DIR, 'k8s');
/** The optional overlay: docker/k8s with the workers scaled by a KEDA ScaledObject. */
export const K8S_KEDA_DIR = path.join(DOCKER_DIR, 'k8s-keda');

// The compiled data source, run by the TypeORM CLI: the compose `migrate` service and the
// Kubernetes Job run exactly this.
export const MIGRATION_COMMAND = [
  'node',
  'node_modules/typeorm/cli.js',
  'migration:run',
  '-d',
  'dist/database/data-source.js',
];
export const APP_PORT = 3000;
// SHUTDOWN_TIMEOUT_MS of the deployments, in seconds: whatever stops the app must wait longer.
export const DRAIN_LIMIT_SECONDS = 25;

/** Every variable .env.example assigns, which a unit test ties to what the config reads. */
export function envExampleVariables(): string[] {
  return fs
    .readFileSync(path.join(ROOT, '.env.example'), 'utf8')
    .split('\n')
    .flatMap((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1] ?? []);
}

/** `npm run start:prod`, word by word: the image's command too (test/deploy-dockerfile). */
export function startCommand(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return pkg.scripts['start:prod'].split(' ');
}
