import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { EXIT } from '../src/cli/exit-codes';
import { ProfileStore } from '../src/cli/profiles';
import { runCli } from '../src/cli/program';
import { Json } from './support/http';
import { Receiver } from './support/receiver';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

const ROOT = join(__dirname, '..');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  json: Json;
}

describe('meb, the CLI, against the real service', () => {
  let t: TestApp;
  let receiver: Receiver;
  let configHome: string;
  let store: ProfileStore;

  /** Runs one command line in this process, as `meb …` would, with its output captured. */
  const meb = (...args: string[]): Promise<Run> => mebIn(undefined, ...args);

  /** As meb, its output a terminal `columns` wide (undefined: not a terminal). */
  const mebIn = async (columns: number | undefined, ...args: string[]): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['--url', t.baseUrl, ...args], {
      store,
      output: { out: (s) => (stdout += `${s}\n`), err: (s) => (stderr += `${s}\n`), columns },
    });
    let json: Json;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
    return { code, stdout, stderr, json };
  };

  const login = (client: keyof typeof CLIENTS = 'alpha', profile = 'default') =>
    meb(
      'login',
      '--client-id',
      CLIENTS[client].client_id,
      '--client-secret',
      CLIENTS[client].client_secret,
      '--profile',
      profile,
    );

  beforeAll(async () => {
    t = await startTestApp();
    receiver = await new Receiver().start();
    configHome = mkdtempSync(join(tmpdir(), 'meb-cli-'));
    store = ProfileStore.forUser(configHome);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    rmSync(configHome, { recursive: true, force: true });
  });

  it('says to log in (exit 3) before any login, and refuses bad credentials with 3', async () => {
    const before = await meb('webhooks', 'list');
    expect(before.code).toBe(EXIT.unauthenticated);
    expect(before.stderr).toContain(
      `not logged in to ${t.baseUrl}: run \`meb login --url ${t.baseUrl}\``,
    );
    const bad = await meb(
      'login',
      '--client-id',
      'alpha',
      '--client-secret',
      'wrong-secret-0123456',
    );
    expect(bad.code).toBe(EXIT.unauthenticated);
  });

  it('logs in with client credentials and keeps the token per profile in a 0600 file', async () => {
    const run = await login();
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain(`logged in to ${t.baseUrl} as alpha (profile default`);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(store.file).toBe(join(configHome, 'meb', 'profiles.json'));
    expect(store.get('default')).toMatchObject({ url: t.baseUrl, client_id: 'alpha' });
    const reader = await login('reader', 'reader');
    expect(reader.code).toBe(EXIT.ok);
    expect(store.get('reader')).toMatchObject({ client_id: 'reader', scope: 'webhooks:read' });
  });

  it('creates, lists, gets, updates, rotates, disables, enables and deletes a webhook; --json for scripts', async () => {
    const { url } = receiver.route({}, 'cli-crud');
    const created = await meb(
      '--json',
      'webhooks',
      'create',
      url,
      '--events',
      'job.started,job.completed',
    );
    expect(created.code).toBe(EXIT.ok);
    expect(created.json).toMatchObject({
      url,
      events: ['job.started', 'job.completed'],
      active: true,
    });
    // Made here and shown once: the service never returns a secret.
    expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.json.secret_hint).toBe(created.json.secret.slice(-4));
    const id: string = created.json.id;

    const human = await meb('webhooks', 'list');
    expect(human.stdout).toContain(id);
    expect(human.stdout).toMatch(/┌/);
    const listed = await meb('--json', 'webhooks', 'list');
    expect(listed.json.map((w: Json) => w.id)).toContain(id);

    expect((await meb('--json', 'webhooks', 'get', id)).json.id).toBe(id);
    const updated = await meb('--json', 'webhooks', 'update', id, '--events', 'job.started');
    expect(updated.json.events).toEqual(['job.started']);

    const rotated = await meb('--json', 'webhooks', 'rotate', id);
    expect(rotated.json.secret).not.toBe(created.json.secret);
    expect(rotated.json.previous_secret_expires_at).toEqual(expect.any(String));
    const rotatedHuman = await meb(
      'webhooks',
      'rotate',
      id,
      '--secret',
      'my-own-secret-0123456789',
    );
    expect(rotatedHuman.stdout).toContain('6789');
    expect(rotatedHuman.stderr).toBe('');

    expect((await meb('--json', 'webhooks', 'disable', id)).json.active).toBe(false);
    expect((await meb('--json', 'webhooks', 'enable', id)).json.active).toBe(true);
    expect((await meb('--json', 'webhooks', 'delete', id)).json).toEqual({ id, deleted: true });
    expect((await meb('webhooks', 'get', id)).code).toBe(EXIT.notFound);
  });

  it('makes whsec_ secrets a Standard Webhooks library verifies deliveries with, as they are (create and rotate)', async () => {
    const { url, path } = receiver.route({}, 'cli-standard-webhooks');
    const created = await meb('--json', 'webhooks', 'create', url, '--events', 'job.started');
    const id: string = created.json.id;
    const verified = async (secret: string, count: number): Promise<unknown> => {
      expect((await meb('--json', 'webhooks', 'test', id)).code).toBe(EXIT.ok);
      const got = await waitFor(() => receiver.requests(path)[count - 1], {
        what: `test delivery ${count}`,
      });
      const headers = {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        // During a rotation's grace it holds both signatures: the library takes either.
        'webhook-signature': String(got.headers['webhook-signature']),
      };
      return new StandardWebhook(secret).verify(got.body.toString('utf8'), headers);
    };
    expect(await verified(created.json.secret, 1)).toMatchObject({ event: 'webhook.test' });
    const rotated = await meb('--json', 'webhooks', 'rotate', id);
    expect(rotated.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await verified(rotated.json.secret, 2)).toMatchObject({ event: 'webhook.test' });
    await meb('webhooks', 'delete', id);
  });

  it('passes a field it has no option for with --field, and names the bad field when refused (exit 6)', async () => {
    const { url } = receiver.route({}, 'cli-field');
    const refused = await meb(
      'webhooks',
      'create',
      url,
      '--events',
      'job.started',
      '--field',
      'colour="blue"',
    );
    expect(refused.code).toBe(EXIT.refused);
    expect(refused.stderr).toContain('colour');
    const badEvent = await meb('webhooks', 'create', url, '--events', 'no.such');
    expect(badEvent.code).toBe(EXIT.refused);
    expect(badEvent.stderr).toMatch(/events/);
  });

  it('tests a webhook, lists and shows its deliveries, redelivers and replays them', async () => {
    const { url, path } = receiver.route({}, 'cli-deliveries');
    const hook = (await meb('--json', 'webhooks', 'create', url, '--events', 'job.started')).json;
    const test = await meb('--json', 'webhooks', 'test', hook.id);
    expect(test.code).toBe(EXIT.ok);
    expect(test.json).toMatchObject({ webhook_id: hook.id, event: 'webhook.test' });
    await waitFor(() => receiver.requests(path).length >= 1, { what: 'the test delivery' });
    const done = await waitFor(
      async () => {
        const run = await meb('--json', 'deliveries', 'get', hook.id, test.json.id);
        return run.json?.status === 'succeeded' ? run : undefined;
      },
      { what: 'the delivery to succeed' },
    );
    expect(done.json.attempts.at(-1)).toMatchObject({ status_code: 200 });
    expect((await meb('deliveries', 'get', hook.id, test.json.id)).stdout).toContain('started_at');

    const listed = await meb('--json', 'deliveries', 'list', hook.id, '--status', 'succeeded');
    expect(listed.json.data.map((d: Json) => d.id)).toEqual([test.json.id]);
    expect((await meb('deliveries', 'list', hook.id)).stdout).toContain(test.json.id);

    const again = await meb('--json', 'redeliver', hook.id, test.json.id);
    expect(again.json).toMatchObject({ id: test.json.id, status: 'pending' });
    await waitFor(() => receiver.requests(path).length >= 2, { what: 'the redelivery' });

    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    const replay = await meb(
      '--json',
      'replay',
      hook.id,
      '--since',
      since,
      '--status',
      'succeeded',
    );
    expect(replay.code).toBe(EXIT.ok);
    expect(replay.json).toEqual({ count: expect.any(Number) });
    expect((await meb('replay', hook.id, '--since', 'yesterday')).code).toBe(EXIT.refused);
  });

  it('lists the event types', async () => {
    const run = await meb('--json', 'event-types');
    expect(run.json.data.map((e: Json) => e.name)).toEqual(
      expect.arrayContaining(['job.started', 'webhook.test']),
    );
    expect((await meb('event-types')).stdout).toContain('job.started');
  });

  it('renders a template on an example body, and shows a chat type’s built-in message without one', async () => {
    const run = await meb(
      '--json',
      'templates',
      'render',
      '--template',
      '{"text": "Started: " & data.topic}',
      '--event',
      'job.started',
    );
    expect(run.code).toBe(EXIT.ok);
    expect(run.json.output).toEqual({ text: 'Started: Quarterly all-hands' });
    const builtIn = await meb(
      'templates',
      'render',
      '--type',
      'slack',
      '--event',
      'operation.complete',
    );
    expect(builtIn.code).toBe(EXIT.ok);
    expect(builtIn.stdout).toContain('"blocks"');
    expect(builtIn.stdout).toMatch(/\(\d+ bytes\)/);
    const bad = await meb('templates', 'render', '--template', '{"a": (1 + }');
    expect(bad.code).not.toBe(EXIT.ok);
    expect(bad.stderr).toContain('template');
  });

  it.each([[100], [80], [undefined]])(
    'prints the event types within a terminal %s columns wide (100 when not a terminal)',
    async (columns) => {
      const run = await mebIn(columns, 'event-types');
      expect(run.code).toBe(EXIT.ok);
      const lines = run.stdout.trimEnd().split('\n');
      const widest = Math.max(...lines.map((l) => [...l].length));
      expect({ widest, lines: lines.length }).toEqual({
        widest: expect.any(Number) as unknown,
        lines: expect.any(Number) as unknown,
      });
      expect(widest).toBeLessThanOrEqual(columns ?? 100);
      // Wrapped, not cut: every description's words are all there.
      const described = (await meb('--json', 'event-types')).json.data as {
        description: string;
      }[];
      const text = run.stdout.replace(/[│┌┐└┘├┤┬┴┼─\s]+/g, ' ');
      for (const { description } of described) {
        expect(text).toContain(description.split(/\s+/).slice(-1)[0]);
      }
    },
  );

  it('finds events by tracking id and shows one (docs/operations.md), or says why not', async () => {
    const found = await meb('--json', 'events', 'find', '--tracking-id', 'no-such-tracking-id');
    const one = await meb('events', 'get', '00000000-0000-4000-8000-000000000000');
    if (found.code === EXIT.ok) {
      expect(found.json.data).toEqual([]);
      expect(one.code).toBe(EXIT.notFound);
    } else {
      // Until the event lookup is served, the CLI says so with the service's own answer.
      expect(found.code).toBe(EXIT.notFound);
      expect(found.stderr).toContain('meb:');
    }
  });

  it('answers 4 for a token without the scope, 2 for usage errors, 7 when the service is unreachable', async () => {
    const forbidden = await meb(
      '--profile',
      'reader',
      'webhooks',
      'create',
      'http://127.0.0.1:9/x',
      '--events',
      'job.started',
    );
    expect(forbidden.code).toBe(EXIT.forbidden);
    expect((await meb('webhooks', 'frobnicate')).code).toBe(EXIT.usage);
    expect((await meb('deliveries', 'list')).code).toBe(EXIT.usage);
    expect((await meb('webhooks', 'update', 'x')).code).toBe(EXIT.usage);
    expect((await meb('--help')).code).toBe(EXIT.ok);
    const store2 = await runCli(
      ['--url', 'http://127.0.0.1:9', 'login', '--client-id', 'a', '--client-secret', 'b'],
      {
        store,
        output: { out: () => undefined, err: () => undefined },
      },
    );
    expect(store2).toBe(EXIT.unavailable);
  });

  it('runs as the package bin: tail prints a new delivery within 2 s, and the exit code reaches the shell', async () => {
    const { url } = receiver.route({}, 'cli-tail');
    const hook = (await meb('--json', 'webhooks', 'create', url, '--events', 'job.started')).json;
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'meb.js'),
        '--url',
        t.baseUrl,
        '--json',
        'deliveries',
        'tail',
        hook.id,
        '--interval',
        '200',
        '--last',
        '0',
      ],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          XDG_CONFIG_HOME: configHome,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    try {
      // Tail is following once it has asked once: its first poll shows nothing (--last 0).
      await waitFor(() => t.logs.some((l) => l.includes(`/api/webhooks/${hook.id}/deliveries`)), {
        what: 'tail to start polling',
        timeoutMs: 30000,
      });
      const test = (await meb('--json', 'webhooks', 'test', hook.id)).json;
      await waitFor(() => stdout.includes(test.id), {
        timeoutMs: 2000,
        intervalMs: 20,
        what: `tail to print ${test.id}; stderr: ${stderr}`,
      });
      const line = JSON.parse(stdout.split('\n').find((l) => l.includes(test.id)) as string);
      expect(line).toMatchObject({ id: test.id, event: 'webhook.test' });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);

    const missing = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'meb.js'),
        '--url',
        t.baseUrl,
        'webhooks',
        'get',
        '00000000-0000-4000-8000-000000000000',
      ],
      {
        env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: configHome },
        stdio: 'ignore',
      },
    );
    expect(await new Promise((resolve) => missing.once('exit', resolve))).toBe(EXIT.notFound);
  });

  it('forgets the token at logout', async () => {
    expect((await meb('logout', '--profile', 'reader')).code).toBe(EXIT.ok);
    expect(store.get('reader')).toBeUndefined();
    expect((await meb('--profile', 'reader', 'webhooks', 'list')).code).toBe(EXIT.unauthenticated);
  });

  it('reconcile: queues a run, waits for its end with --wait, exit 1 unless it succeeded; needs bridge:admin', async () => {
    const since = new Date(Date.now() - 60 * 60 * 1000).toISOString();
    expect((await login('alpha', 'plain')).code).toBe(EXIT.ok);
    const refused = await meb('reconcile', '--since', since, '--profile', 'plain');
    expect(refused.code).toBe(EXIT.forbidden);
    expect((await login('admin', 'ops')).code).toBe(EXIT.ok);
    const queued = await meb(
      'reconcile',
      '--since',
      since,
      '--dry-run',
      '--json',
      '--profile',
      'ops',
    );
    expect(queued.code).toBe(EXIT.ok);
    expect(queued.json).toMatchObject({ status: 'queued', dry_run: true, trigger: 'manual' });
    // No platform credentials in this app: the run cannot reach the platform and ends failed.
    const waited = await meb(
      'reconcile',
      '--since',
      since,
      '--wait',
      '--interval',
      '100',
      '--json',
      '--profile',
      'ops',
    );
    expect(waited.code).toBe(EXIT.failed);
    expect(waited.json).toMatchObject({ status: 'failed', dry_run: false });
    expect(waited.json.errors[0]).toMatchObject({ source: 'meetings', status: null });
    expect(waited.stderr).toContain(`reconciliation ${waited.json.id} ended failed`);
    // Its errors as words, one line each (a list of objects was printed `[object Object]`).
    const shown = await meb('reconciliations', 'get', waited.json.id, '--profile', 'ops');
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).not.toContain('[object Object]');
    expect(shown.stdout).toContain(
      'source: meetings, status: -, message: The meeting platform is not configured',
    );
    // An ended run cannot be cancelled (409); a queued one can, and ends failed saying so.
    const ended = await meb('reconciliations', 'cancel', waited.json.id, '--profile', 'ops');
    expect(ended.code).toBe(EXIT.refused);
    expect(ended.stderr).toContain('Reconciliation run has ended already (failed)');
    const unknown = '0190a000-0000-7000-8000-000000000000';
    expect((await meb('reconciliations', 'cancel', unknown, '--profile', 'ops')).code).toBe(
      EXIT.notFound,
    );
    const bad = await meb('reconcile', '--since', 'yesterday', '--profile', 'ops');
    expect(bad.code).toBe(EXIT.refused);
  });
});
