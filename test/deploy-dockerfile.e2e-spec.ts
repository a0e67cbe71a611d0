/**
 * Static checks of docker/Dockerfile and .dockerignore (no Docker engine on the CI machines):
 * stages, base image, what the runtime stage ships, user, signals, port, health check.
 */
import * as fs from 'fs';
import * as path from 'path';
import { APP_PORT, DOCKER_DIR, ROOT, startCommand } from './support/deploy-files';
import {
  dockerIgnored,
  execForm,
  Instruction,
  parseDockerfile,
  stages,
} from './support/dockerfile';

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

  it('builds the web console in the same npm run build, from console/ (dist/console-app)', () => {
    const copied = args(build, 'COPY').flatMap((copy) => copy.split(/\s+/).slice(0, -1));
    expect(copied).toContain('console');
    const scripts = (
      JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    expect(scripts.build).toMatch(/\bnpm run build:console\b/);
    expect(scripts['build:console']).toMatch(/^vite build\b/);
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

  it('starts node directly in exec form, so SIGTERM reaches the process, as npm run start:prod does', () => {
    const commands = args(runtime, 'CMD');
    expect(commands.length).toBeGreaterThan(0);
    const command = execForm(commands[commands.length - 1]);
    expect(command?.slice(-1)).toEqual(['dist/main.js']);
    // One command for the image, `npm run start:prod` and the benchmarks (bench/pipeline.ts).
    expect(command).toEqual(startCommand());
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

    it.each([
      'node_modules',
      'dist',
      '.git',
      '.env',
      '.env.local',
      'coverage',
      'reports',
      'bench',
      'scripts',
      'docs',
      'README.md',
    ])('keeps %s out of the build context', (file) => {
      expect(dockerIgnored(patterns, file)).toBe(true);
    });

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
