/**
 * The consumer examples of docs/destination-rabbitmq.md and docs/destination-nats.md, taken
 * from the documents as they stand: the Node.js consumers run against the real brokers and
 * must accept what the service published and refuse a forged message; the Python signature
 * checks run on the same bytes. (The Python consumers' own libraries, pika and nats-py, are
 * not installed here: their wiring is not run.)
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { TEST_NATS_URL, TEST_RABBITMQ_URL, natsStream, rabbitQueue } from './support/brokers';
import { request } from './support/http';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

const ROOT = join(__dirname, '..');
const SECRET = 'docs-consumer-secret-0123456789';
const havePython = spawnSync('python3', ['--version']).status === 0;
if (!havePython && process.env.CI) throw new Error('python3 does not run');

/** The first ```lang block of `doc` that contains `marker`. */
function docBlock(doc: string, lang: string, marker: string): string {
  const markdown = readFileSync(join(ROOT, 'docs', doc), 'utf8');
  for (const [, body] of markdown.matchAll(
    new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'),
  )) {
    if (body.includes(marker)) return body;
  }
  throw new Error(`docs/${doc}: no \`\`\`${lang} block containing "${marker}"`);
}

/** Runs a Node.js example from the repository root (so it finds node_modules); keeps its output. */
function runNode(code: string, env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['-e', code], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return {
    lines: () => output.split('\n'),
    output: () => output,
    stop: () => child.kill('SIGKILL'),
  };
}

/** Whether a documented Python check accepts `body` with `signature` and `secret`. */
function pythonAccepts(check: string, call: string, body: Buffer, signature: string): boolean {
  const program = `${check}\nimport sys\nbody = sys.stdin.buffer.read()\nprint(${call})\n`;
  const run = spawnSync('python3', ['-c', program], {
    input: body,
    env: { SIG: signature, SECRET },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(run.stderr);
  return run.stdout.trim() === 'True';
}

describe('the destination pages: their consumer examples verify what the service publishes', () => {
  let t: TestApp;
  let token: string;
  let queue: Awaited<ReturnType<typeof rabbitQueue>>;
  let stream: Awaited<ReturnType<typeof natsStream>>;

  beforeAll(async () => {
    queue = await rabbitQueue('docs', { consume: false });
    stream = await natsStream();
    t = await startTestApp({
      env: {
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: TEST_RABBITMQ_URL },
          { name: 'stream', type: 'nats', url: TEST_NATS_URL },
        ]),
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await queue?.close();
    await stream?.close();
  });

  async function publishTo(destination: unknown): Promise<string> {
    const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: { events: ['job.started'], secret: SECRET, destination },
    });
    expect(res.status).toBe(201);
    await t.app.get(DataSource).query(`UPDATE webhooks SET active = (id = $1)`, [res.body.id]);
    const { deliveryIds } = await t.app
      .get(DispatcherService)
      .publish({ kind: 'job.started', data: { topic: 'docs' } });
    return deliveryIds[0];
  }

  it('RabbitMQ: the Node.js consumer accepts the delivery and rejects a forged message', async () => {
    const deliveryId = await publishTo({
      type: 'rabbitmq',
      broker: 'bus',
      exchange: queue.exchange,
      routing_key: 'docs',
    });
    queue.sendRaw(Buffer.from('{"event":"job.started"}'), {
      messageId: 'forged-1',
      headers: { 'x-service-signature': '0'.repeat(64) },
    });
    const consumer = runNode(docBlock('destination-rabbitmq.md', 'js', 'amqplib'), {
      AMQP_URL: TEST_RABBITMQ_URL,
      QUEUE: queue.queue,
      WEBHOOK_SECRET: SECRET,
    });
    try {
      await waitFor(
        () =>
          consumer.lines().includes(`accepted ${deliveryId} job.started`) &&
          consumer.lines().includes('rejected forged-1: bad signature'),
        { what: 'the consumer to accept the delivery and reject the forgery' },
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${consumer.output()}`);
      });
    } finally {
      consumer.stop();
    }
  });

  it('NATS: the Node.js consumer accepts the delivery and rejects a forged message', async () => {
    const subject = `${stream.prefix}.docs`;
    const deliveryId = await publishTo({ type: 'nats', broker: 'stream', subject });
    await stream.publishRaw(subject, Buffer.from('{"event":"job.started"}'), {
      'Nats-Msg-Id': 'forged-2',
      'x-service-signature': '0'.repeat(64),
    });
    const consumer = runNode(docBlock('destination-nats.md', 'js', "require('nats')"), {
      NATS_URL: TEST_NATS_URL,
      STREAM: stream.name,
      CONSUMER: `docs_${randomBytes(3).toString('hex')}`,
      WEBHOOK_SECRET: SECRET,
    });
    try {
      await waitFor(
        () =>
          consumer.lines().includes(`accepted ${deliveryId} job.started`) &&
          consumer.lines().includes('rejected forged-2: bad signature'),
        { what: 'the consumer to accept the delivery and reject the forgery' },
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${consumer.output()}`);
      });
    } finally {
      consumer.stop();
    }
  });

  (havePython ? it : it.skip)(
    'Python: both pages’ signature checks accept the published bytes and refuse altered ones',
    async () => {
      // The service's message, not the forged one the NATS case put beside it.
      const msg = (await stream.messages()).find((m) => m.header?.get('x-service-delivery'))!;
      const body = Buffer.from(msg.data);
      const signature = msg.header!.get('x-service-signature');
      const rabbit = docBlock('destination-rabbitmq.md', 'python', 'def signature_valid');
      const rabbitCall = `signature_valid(body, {"x-service-signature": os.environ["SIG"].encode()}, os.environ["SECRET"])`;
      const nats = docBlock('destination-nats.md', 'python', 'def signature_valid');
      const natsCall = 'signature_valid(body, os.environ["SIG"], os.environ["SECRET"])';
      const withOs = (code: string) => `import os\n${code}`;
      expect(pythonAccepts(withOs(rabbit), rabbitCall, body, signature)).toBe(true);
      expect(pythonAccepts(withOs(nats), natsCall, body, signature)).toBe(true);
      const altered = Buffer.concat([body, Buffer.from(' ')]);
      expect(pythonAccepts(withOs(rabbit), rabbitCall, altered, signature)).toBe(false);
      expect(pythonAccepts(withOs(nats), natsCall, altered, signature)).toBe(false);
    },
  );
});
