/**
 * The README's try-out, driven as a newcomer runs it: `npm run tryout` (its own database, the
 * receiver subscribed, a banner with the next steps), `npm run receiver`, `npm run send-event --
 * meeting.started`, the receiver printing a verified delivery, the CLI following it, a secret
 * rotation the receiver verifies through, a restart that finds the webhook again, `--reset`,
 * and a taken PORT said in one line. Then `npm run tryout -- --fake-platform`: an event pushed
 * over the fake platform's socket arrives `via: "websocket"`, and the banner's `meb reconcile`
 * creates the meeting the fake's reports list and no event told of. Keeps the recipe true.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { TRYOUT } from '../scripts/tryout-settings';
import { SCOPES } from '../src/config/config.types';
import { request } from './support/http';
import { NpmScript, runNpmScript } from './support/npm-script';
import { freePort } from './support/spawn-app';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { TestDatabase, createTestDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';

const ROOT = join(__dirname, '..');
const BANNER_WEBHOOK = /webhook ([0-9a-f-]{36}) \((created|found again)\)/;
/** A test that runs `meb` several times: each run loads Node and the CLI, 15 s under load. */
const MEB_TEST_MS = 120_000;

/** `meb …` as the banner says it, through the package's bin, with its own configuration home. */
const mebAt =
  (baseUrl: () => string, configHome: () => string) =>
  (...args: string[]): Promise<{ code: number | null; output: string }> =>
    new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin', 'meb.js'), '--url', baseUrl(), ...args],
        {
          env: { PATH: process.env.PATH ?? '', XDG_CONFIG_HOME: configHome() },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.once('exit', (code) => resolve({ code, output }));
    });

/** A notification as the receiver prints it. */
interface PrintedBody {
  data: { topic?: string };
  source?: { via?: string };
}

/** The receiver's printed deliveries: the kind and the JSON body of each. */
const printedDeliveries = (output: string): { kind: string; body: PrintedBody }[] =>
  [
    ...output.matchAll(
      /verified delivery \S+ \(attempt \d+\): (\S+) \[[^\]]*\]\n(\{[\s\S]*?\n\})/g,
    ),
  ].map((m) => ({ kind: m[1], body: JSON.parse(m[2]) as PrintedBody }));

const receiverListening = (receiver: NpmScript) =>
  waitFor(() => receiver.output().includes('Receiver on'), {
    timeoutMs: 30_000,
    what: 'the receiver to listen',
  });

/** Stops the try-out and its receiver, and drops what they made. */
async function cleanUp(
  service: NpmScript | undefined,
  receiver: NpmScript | undefined,
  prefix: string,
  database: TestDatabase | undefined,
  configHome: string,
): Promise<void> {
  await Promise.all([service?.stop(), receiver?.stop()]);
  await deleteRedisKeys(prefix);
  await database?.drop();
  rmSync(configHome, { recursive: true, force: true });
}

/**
 * The try-out compiles the service as it starts (ts-node): under stress-ng beside the suite's
 * other files that took over 120 s once. A deadline, generous, never a bound.
 */
const STARTED_WITHIN_MS = 300_000;

describe('the README try-out', () => {
  let database: TestDatabase;
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;
  let service: NpmScript | undefined;
  let receiver: NpmScript;
  let baseUrl: string;
  let servicePort: number;
  let receiverPort: number;
  let receiverUrl: string;
  let webhookId: string;
  let configHome: string;

  const env = () => ({
    PORT: String(servicePort),
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
  });

  /** Starts the try-out as the README does (only ports, database and keys differ) and waits for its banner. */
  const startTryout = async (...args: string[]): Promise<{ id: string; how: string }> => {
    service = runNpmScript('tryout', ['--receiver-url', receiverUrl, ...args], env());
    const match = await waitFor(() => BANNER_WEBHOOK.exec(service?.output() ?? '') ?? undefined, {
      timeoutMs: STARTED_WITHIN_MS,
      what: `the try-out banner; output: ${service.output()}`,
    });
    return { id: match[1], how: match[2] };
  };

  const token = async () => {
    const basic = Buffer.from(`${TRYOUT.clientId}:${TRYOUT.clientSecret}`).toString('base64');
    const res = await request(baseUrl, 'POST', '/oauth/token', {
      body: 'grant_type=client_credentials',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    return res.body.access_token as string;
  };

  const meb = mebAt(
    () => baseUrl,
    () => configHome,
  );

  beforeAll(async () => {
    database = await createTestDatabase();
    configHome = mkdtempSync(join(tmpdir(), 'meb-tryout-'));
    [servicePort, receiverPort] = [await freePort(), await freePort()];
    baseUrl = `http://127.0.0.1:${servicePort}`;
    receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;
    receiver = runNpmScript('receiver', ['--port', String(receiverPort)]);
    ({ id: webhookId } = await startTryout());
    await receiverListening(receiver);
  }, STARTED_WITHIN_MS + 60_000);

  afterAll(() => cleanUp(service, receiver, prefix, database, configHome));

  it('announces the client, the subscribed webhook and the next steps, with no log lines below warn', () => {
    const output = service?.output() ?? '';
    expect(output).toContain(`${TRYOUT.clientId} / ${TRYOUT.clientSecret}`);
    expect(output).toContain(
      `webhook ${webhookId} (created): job.started, follower.gained → ${receiverUrl}`,
    );
    expect(output).toContain('npm run send-event -- meeting.started');
    expect(output).toContain(`meb deliveries tail ${webhookId}`);
    expect(output).toContain('/docs');
    // The route-mapping and request lines are info: at the try-out's default level, none.
    expect(output).not.toContain('Mapped {');
    expect(output).not.toMatch(/"level":30/);
    expect(receiver.output()).toContain(receiverUrl);
  });

  it('gives the try-out client every scope, queues:admin too', async () => {
    const res = await request(baseUrl, 'POST', '/oauth/token', {
      body: `grant_type=client_credentials&client_id=${TRYOUT.clientId}&client_secret=${TRYOUT.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(200);
    expect(res.body.scope.split(' ').sort()).toEqual([...SCOPES].sort());
  });

  it('delivers a sent sample event to the receiver, which prints it verified and says by which signature', async () => {
    const send = runNpmScript('send-event', ['meeting.started', '--url', baseUrl]);
    expect(await send.exit).toBe(0);
    expect(send.output()).toContain('meeting.started → 200 {"status":"accepted"}');

    const delivery =
      /verified delivery (\S+) \(attempt 1\): job\.started \[([^\]]*)\]\n(\{[\s\S]*?\n\})/;
    const printed = await waitFor(() => delivery.exec(receiver.output()) ?? undefined, {
      timeoutMs: 30_000,
      what: 'the receiver to print a verified delivery',
    });
    expect(printed[2]).toBe(
      'x-service-signature with the secret; webhook-signature #1 with the secret',
    );
    expect(JSON.parse(printed[3])).toMatchObject({
      event: 'job.started',
      data: { id: '85746065432' },
      source: { platform: 'zoom', event: 'meeting.started' },
    });
  });

  it(
    'is followed with the CLI the banner names: login, then the webhook and its deliveries',
    async () => {
      const login = await meb(
        'login',
        '--client-id',
        TRYOUT.clientId,
        '--client-secret',
        TRYOUT.clientSecret,
      );
      expect(login.code).toBe(0);
      const listed = await meb('--json', 'webhooks', 'list');
      expect(JSON.parse(listed.output).map((w: { id: string }) => w.id)).toEqual([webhookId]);
      const deliveries = await meb('--json', 'deliveries', 'list', webhookId);
      expect(JSON.parse(deliveries.output).data.length).toBeGreaterThan(0);
    },
    MEB_TEST_MS,
  );

  it('keeps verifying through a secret rotation, saying that only the previous secret matched', async () => {
    const rotated = await meb(
      'webhooks',
      'rotate',
      webhookId,
      '--secret',
      'tryout-rotated-secret-0123456789',
    );
    expect(rotated.code).toBe(0);
    const before = receiver.output().length;
    const send = runNpmScript('send-event', ['meeting.started', '--url', baseUrl]);
    expect(await send.exit).toBe(0);
    const printed = await waitFor(
      () =>
        /verified delivery \S+ \(attempt 1\): job\.started \[([^\]]*)\]\n(.*)\n/.exec(
          receiver.output().slice(before),
        ) ?? undefined,
      { timeoutMs: 30_000, what: 'the receiver to verify a delivery after the rotation' },
    );
    expect(printed[1]).toBe(
      'x-service-signature-previous with the secret; webhook-signature #2 with the secret',
    );
    expect(printed[2]).toContain("the webhook's secret was rotated");
  });

  it('verifies with either of two secrets, naming which, and refuses with a hint when none matches', async () => {
    const port = await freePort();
    const two = runNpmScript('receiver', [
      '--port',
      String(port),
      '--secret',
      'old-secret-0123456789',
      '--secret',
      'new-secret-0123456789',
    ]);
    try {
      await waitFor(() => two.output().includes('Receiver on'), {
        timeoutMs: 30_000,
        what: 'the second receiver',
      });
      const body = '{"event":"job.started"}';
      const id = 'delivery-two';
      const timestamp = new Date();
      const res = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: 'POST',
        body,
        headers: {
          'x-service-delivery': id,
          'x-service-event': 'job.started',
          'x-service-signature': createHmac('sha256', 'new-secret-0123456789')
            .update(body)
            .digest('hex'),
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': new Webhook(Buffer.from('new-secret-0123456789'), {
            format: 'raw',
          }).sign(id, timestamp, body),
        },
      });
      expect(res.status).toBe(200);
      await waitFor(
        () =>
          two
            .output()
            .includes(
              'verified delivery delivery-two (attempt ?): job.started [x-service-signature with secret 2 of 2; webhook-signature #1 with secret 2 of 2]',
            ),
        { what: 'the second receiver to say which secret matched' },
      );
      const forged = await fetch(`http://127.0.0.1:${port}/hook`, {
        method: 'POST',
        headers: { 'x-service-signature': 'a'.repeat(64), 'x-service-delivery': 'forged-1' },
        body,
      });
      expect(forged.status).toBe(401);
      await waitFor(() => two.output().includes('REFUSED POST /hook'), { what: 'the refusal' });
      expect(two.output()).toContain(
        "Was the webhook's secret rotated? Restart with --secret <the new secret>",
      );
    } finally {
      await two.stop();
    }
  });

  it(
    'finds its webhook again on a second start instead of subscribing twice',
    async () => {
      await service?.stop();
      const again = await startTryout();
      expect(again).toEqual({ id: webhookId, how: 'found again' });
      // Rotated above: the banner must not name the try-out's secret as the one it signs with.
      const banner = service?.output() ?? '';
      expect(banner).not.toContain(`signed with the secret ${TRYOUT.webhookSecret}`);
      expect(banner).toContain('signed with the secret it was rotated to (ending in 6789)');
      expect(banner).toContain('npm run receiver -- --secret <the new secret>');
      const res = await request(baseUrl, 'GET', '/api/webhooks?limit=100', {
        token: await token(),
      });
      expect(res.body.data.filter((w: { url: string }) => w.url === receiverUrl)).toHaveLength(1);
    },
    STARTED_WITHIN_MS + 60_000,
  );

  it(
    'starts empty with --reset',
    async () => {
      await service?.stop();
      const fresh = await startTryout('--reset');
      expect(fresh.how).toBe('created');
      expect(service?.output()).toContain(`signed with the secret ${TRYOUT.webhookSecret}`);
      expect(fresh.id).not.toBe(webhookId);
      const res = await request(baseUrl, 'GET', '/api/webhooks?limit=100', {
        token: await token(),
      });
      expect(res.body.data.map((w: { id: string }) => w.id)).toEqual([fresh.id]);
    },
    STARTED_WITHIN_MS + 60_000,
  );

  it(
    'says in one line that PORT is taken when it is, with no stack',
    async () => {
      // The service of the test above still holds servicePort.
      const second = runNpmScript('tryout', ['--receiver-url', receiverUrl], env());
      expect(await second.exit).toBe(1);
      const lines = second.output().split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]).msg).toBe(
        `Failed to start: PORT ${servicePort} is already in use (another npm start or npm run tryout?): stop that process, or set PORT to a free port`,
      );
    },
    STARTED_WITHIN_MS + 60_000,
  );
});

describe('the README try-out with a fake platform (no account)', () => {
  let database: TestDatabase;
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;
  let service: NpmScript;
  let receiver: NpmScript;
  let baseUrl: string;
  let platformUrl: string;
  let configHome: string;
  const meb = mebAt(
    () => baseUrl,
    () => configHome,
  );

  beforeAll(async () => {
    database = await createTestDatabase();
    configHome = mkdtempSync(join(tmpdir(), 'meb-tryout-fake-'));
    const [servicePort, receiverPort, platformPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    baseUrl = `http://127.0.0.1:${servicePort}`;
    platformUrl = `http://127.0.0.1:${platformPort}`;
    receiver = runNpmScript('receiver', ['--port', String(receiverPort)]);
    service = runNpmScript(
      'tryout',
      [
        '--fake-platform',
        '--fake-platform-port',
        String(platformPort),
        '--receiver-url',
        `http://127.0.0.1:${receiverPort}/hook`,
      ],
      {
        PORT: String(servicePort),
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        QUEUE_PREFIX: prefix,
      },
    );
    await waitFor(() => service.output().includes('5. recover the missed meeting'), {
      timeoutMs: STARTED_WITHIN_MS,
      what: `the try-out banner; output: ${service.output()}`,
    });
    await receiverListening(receiver);
  }, STARTED_WITHIN_MS + 60_000);

  afterAll(() => cleanUp(service, receiver, prefix, database, configHome));

  it('names the fake platform, the missed meeting and the two steps it adds', () => {
    const output = service.output();
    expect(output).toContain('fake platform on this machine (no account)');
    expect(output).toContain('its reports list a meeting no event told of');
    expect(output).toContain(
      `4. an event over the platform's socket: npm run send-event -- --via websocket meeting.started --platform-url ${platformUrl}`,
    );
    expect(output).toMatch(/5\. recover the missed meeting: +meb reconcile --since \S+Z --wait/);
    expect(output).not.toMatch(/"level":30/);
  });

  it(
    'delivers an event pushed over the platform socket, via "websocket"',
    async () => {
      expect(
        (await meb('login', '--client-id', TRYOUT.clientId, '--client-secret', TRYOUT.clientSecret))
          .code,
      ).toBe(0);
      // The service connects to the fake's socket within seconds of its start.
      await waitFor(
        async () => {
          const status = await meb('--json', 'inbound', 'status');
          return status.code === 0 && JSON.parse(status.output).websocket.state === 'connected';
        },
        { timeoutMs: 60_000, what: 'the socket to the fake platform to be connected' },
      );
      const send = runNpmScript('send-event', [
        '--via',
        'websocket',
        'meeting.started',
        '--platform-url',
        platformUrl,
      ]);
      expect(await send.exit).toBe(0);
      expect(send.output()).toContain("meeting.started → pushed over the platform's socket");
      const delivered = await waitFor(
        () =>
          printedDeliveries(receiver.output()).find((d) => d.body.source?.via === 'websocket') ??
          undefined,
        { timeoutMs: 30_000, what: 'the receiver to print a delivery that came by the socket' },
      );
      expect(delivered).toMatchObject({
        kind: 'job.started',
        body: { source: { platform: 'zoom', event: 'meeting.started', via: 'websocket' } },
      });
    },
    MEB_TEST_MS,
  );

  it(
    "creates and delivers the missed meeting with the banner's meb reconcile",
    async () => {
      const command = /5\. recover the missed meeting: +meb (reconcile --since \S+ --wait)/.exec(
        service.output(),
      );
      expect(command).not.toBeNull();
      const run = await meb('--json', ...(command as RegExpExecArray)[1].split(' '));
      expect({ code: run.code, output: run.output }).toEqual({
        code: 0,
        output: expect.any(String),
      });
      const ran = JSON.parse(run.output);
      expect(ran).toMatchObject({
        status: 'succeeded',
        created: {
          'meeting.started': 1,
          'meeting.ended': 1,
          'meeting.participant_joined': 2,
          'meeting.participant_left': 2,
        },
      });
      // The try-out's webhook takes job.started and follower.gained: the start and both joins.
      const reconciled = await waitFor(
        () => {
          const found = printedDeliveries(receiver.output()).filter(
            (d) => d.body.source?.via === 'reconciliation',
          );
          return found.length >= 3 && found;
        },
        { timeoutMs: 30_000, what: 'the receiver to print the reconciled deliveries' },
      );
      expect(reconciled.map((d) => d.kind).sort()).toEqual([
        'follower.gained',
        'follower.gained',
        'job.started',
      ]);
      expect(reconciled.map((d) => d.body.data.topic)).toEqual(
        Array(3).fill('The meeting no event told of'),
      );
    },
    MEB_TEST_MS,
  );
});
