/**
 * What one HTTP delivery attempt costs the sending process's CPU, by the way it uses undici
 * (docs/benchmarks.md, "HTTP attempts through dispatch()"). A receiver in a process of its own
 * (node:http on 127.0.0.1, answers 200 "ok" at once) takes POSTS signed-size bodies (900 bytes,
 * eight headers) at CONCURRENCY from this process, after a warm-up of 3,000; this process's
 * user + system CPU per request is measured over the POSTS. Sides, alternating round by round:
 *
 *   before             an attempt as it was sent before: the URL re-check raced against an
 *                      AbortSignal (a timer aborting it), then undici request() with that
 *                      signal and the answer read from its body stream
 *   request            undici request() alone, no signal, no URL check (the client's floor
 *                      through that API)
 *   app                the app's HttpSender.send: the URL re-check raced against the
 *                      Deadline's timer, then dispatch() with handler callbacks
 *
 *   npx ts-node --transpile-only bench/http-client.ts [posts=20000] [concurrency=10] [rounds=3]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { finished } from 'node:stream';
import { Agent, request } from 'undici';
import { HttpSender } from '../src/destinations/http/http.sender';
import { Deadline, OutgoingMessage } from '../src/destinations/transport';
import { checkWebhookUrl } from '../src/destinations/http/ssrf-policy';
import { helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[posts=20000] [concurrency=10] [rounds=3]');

const POSTS = Number(process.argv[2] ?? 20_000);
const CONCURRENCY = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 3);
const TIMEOUT_MS = 10_000;
const median = (values: number[]) => percentile(values, 0.5);

const message: OutgoingMessage = {
  deliveryId: '0190b5a0-0000-7000-8000-000000000001',
  event: 'job.started',
  attempt: 1,
  body: Buffer.alloc(900, 'a'),
  headers: {
    'content-type': 'application/json',
    'x-service-signature': 'x'.repeat(64),
    'webhook-id': '0190b5a0-0000-7000-8000-000000000001',
    'webhook-timestamp': '1764115200',
    'webhook-signature': `v1,${'y'.repeat(44)}`,
    'x-service-event': 'job.started',
    'x-service-delivery': '0190b5a0-0000-7000-8000-000000000001',
    'user-agent': 'meeting-event-bridge/bench',
  },
};

type Send = () => Promise<unknown>;

/** The URL check's race as attempts ran it before: against an AbortSignal, by a listener. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

function viaRequest(url: string, agent: Agent, asBefore: boolean): Send {
  return async () => {
    const controller = asBefore ? new AbortController() : null;
    const timer = controller ? setTimeout(() => controller.abort(), TIMEOUT_MS) : null;
    try {
      if (controller) {
        await unlessAborted(checkWebhookUrl(url, { allowPrivate: true }), controller.signal);
      }
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        signal: controller?.signal,
        headers: message.headers,
        body: message.body,
      });
      await new Promise<void>((resolve) => {
        const kept: Buffer[] = [];
        const onData = (chunk: Buffer) => kept.push(chunk);
        res.body.on('data', onData);
        finished(res.body, () => {
          res.body.off('data', onData);
          resolve();
        });
      });
      return res.statusCode;
    } finally {
      if (timer) clearTimeout(timer);
    }
  };
}

function viaApp(url: string, destination: HttpSender): Send {
  return () =>
    destination.send(
      { type: 'http' },
      { url, ownerClientId: '' },
      message,
      new Deadline(TIMEOUT_MS),
    );
}

/** CPU µs of this process per POST, `total` POSTs at CONCURRENCY. */
async function cpuPerPost(send: Send, total: number): Promise<number> {
  let left = total;
  const work = async () => {
    while (left-- > 0) await send();
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, work));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / total;
}

async function main(): Promise<void> {
  const receiver = fork(__filename, ['--receiver'], { stdio: 'inherit' });
  const [port] = (await once(receiver, 'message')) as [number];
  const url = `http://127.0.0.1:${port}/hook`;
  const agent = new Agent({ connections: 50 });
  const app = new HttpSender({
    webhookAllowPrivateUrls: true,
    timeoutMs: TIMEOUT_MS,
    concurrency: 50,
  });
  const sides: [string, Send][] = [
    ['before', viaRequest(url, agent, true)],
    ['request', viaRequest(url, agent, false)],
    ['app (dispatch)', viaApp(url, app)],
  ];
  const figures = new Map<string, number[]>(sides.map(([name]) => [name, []]));
  console.log(
    `bench/http-client.ts: ${POSTS} POSTs at concurrency ${CONCURRENCY}, ${ROUNDS} rounds`,
  );
  for (const [, send] of sides) await cpuPerPost(send, 3000);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, send] of sides) {
      const us = await cpuPerPost(send, POSTS);
      figures.get(name)!.push(us);
      console.log(`  round ${round}, ${name}: ${us.toFixed(1)} µs of CPU per POST`);
    }
  }
  const base = median(figures.get('before')!);
  console.log('medians');
  for (const [name, values] of figures) {
    const m = median(values);
    console.log(`  ${name}: ${m.toFixed(1)} µs per POST (${(m / base).toFixed(2)}x of before)`);
  }
  await app.close();
  await agent.close();
  receiver.kill();
}

if (process.argv[2] === '--receiver') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createServer } = require('node:http') as typeof import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port));
} else {
  void main();
}
