/**
 * Broker destinations and filters (docs/destinations.md), beside same-run baselines.
 *
 * - burst: EVENTS events (default 5,000) published at concurrency 50 to one webhook, once per
 *   destination type in the same run, the HTTP one first as the baseline: a local receiver,
 *   then a RabbitMQ exchange (publisher confirms) read by a consumer in this process, then a
 *   NATS JetStream stream read by an ordered consumer. Events/s from the first publish to the
 *   last arrival, and publish → arrival p50/p99. The app runs in this process, role all (its
 *   own worker sends), every delivery setting at its default.
 * - fan-out: one event published to 1,000 webhooks (the statement that writes the event and
 *   its 1,000 deliveries), ROUNDS times each, interleaved: no webhook with a filter (the
 *   baseline), one of the 1,000 with a filter, and all 1,000 with one. An API-only app, so no
 *   worker competes for the machine; median and p90 of publish() in ms.
 *
 *   npx ts-node --transpile-only bench/destinations.ts [events=5000] [rounds=15]
 *
 * The machine may be shared: the load average is printed at the start and the end.
 */
import * as amqp from 'amqplib';
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { AckPolicy, DeliverPolicy, connect } from 'nats';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { TEST_NATS_URL, TEST_RABBITMQ_URL } from '../test/support/brokers';
import { request } from '../test/support/http';
import { startReceiver } from '../test/support/receiver';
import { TestApp, startTestApp } from '../test/support/test-app';
import { waitFor } from '../test/support/wait-for';
import { helpIfAsked, percentile } from './support';

helpIfAsked(__filename, '[events=5000] [rounds=15]');

const EVENTS = Math.min(Number(process.argv[2] ?? 5000), 50_000);
const ROUNDS = Math.min(Number(process.argv[3] ?? 15), 100);
const CONCURRENCY = 50;
const FAN_OUT = 1000;
const SECRET = 'bench-destinations-secret-0123';
const suffix = randomBytes(4).toString('hex');

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const median = (values: number[]) => percentile(values, 0.5);
const fmt = (n: number, digits = 0) => n.toFixed(digits);

async function createWebhook(t: TestApp, token: string, body: object): Promise<string> {
  const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
    token,
    body: { events: ['job.started'], secret: SECRET, ...body },
  });
  if (res.status !== 201) throw new Error(`webhook: ${res.status} ${res.text}`);
  return res.body.id as string;
}

interface BurstResult {
  perSecond: number;
  p50: number;
  p99: number;
}

/** Publishes EVENTS events to the one active webhook; `arrivals` maps delivery id → arrival. */
async function burst(
  t: TestApp,
  webhookId: string,
  arrivals: Map<string, number>,
): Promise<BurstResult> {
  await t.app.get(DataSource).query(`UPDATE webhooks SET active = (id = $1)`, [webhookId]);
  const dispatcher = t.app.get(DispatcherService);
  const sentAt = new Map<string, number>();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const n = next++;
        const at = performance.now();
        const { deliveryIds } = await dispatcher.publish({ kind: 'job.started', data: { n } });
        sentAt.set(deliveryIds[0], at);
      }
    }),
  );
  await waitFor(() => [...sentAt.keys()].every((id) => arrivals.has(id)), {
    timeoutMs: 10 * 60_000,
    intervalMs: 100,
    what: 'every delivery to arrive',
  });
  const last = Math.max(...[...sentAt.keys()].map((id) => arrivals.get(id)!));
  const latencies = [...sentAt].map(([id, at]) => arrivals.get(id)! - at);
  return {
    perSecond: EVENTS / ((last - start) / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

async function burstPhase(): Promise<void> {
  const receiver = await startReceiver();
  const exchange = `meb.alpha.bench-${suffix}`;
  const queue = `meb-bench-${suffix}`;
  const amqpConnection = await amqp.connect(TEST_RABBITMQ_URL);
  const channel = await amqpConnection.createChannel();
  await channel.assertExchange(exchange, 'direct', { durable: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, exchange, 'bench');
  const stream = `MEB_BENCH_${suffix}`;
  // Inside client alpha's part of each broker (docs/destinations.md#clients-sharing-a-broker).
  const subject = `meb.alpha.bench${suffix}.events`;
  const nc = await connect({ servers: TEST_NATS_URL });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.add({ name: stream, subjects: [`meb.alpha.bench${suffix}.>`] });

  const arrivals = new Map<string, number>();
  const route = receiver.route({}, 'bench');
  // Arrival = when the receiver has the request, or the consumer the message.
  const seenHttp = setInterval(() => {
    for (const req of receiver.requests(route.path)) {
      const id = String(req.headers['x-service-delivery']);
      if (!arrivals.has(id)) arrivals.set(id, req.receivedAt - performance.timeOrigin);
    }
  }, 20);
  await channel.consume(
    queue,
    (msg) => msg && arrivals.set(String(msg.properties.messageId), performance.now()),
    { noAck: true },
  );
  await jsm.consumers.add(stream, {
    durable_name: 'bench',
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.All,
  });
  const consumer = await nc.jetstream().consumers.get(stream, 'bench');
  const messages = await consumer.consume({ max_messages: 1000 });
  void (async () => {
    for await (const m of messages) arrivals.set(m.headers!.get('Nats-Msg-Id'), performance.now());
  })();

  const t = await startTestApp({
    env: {
      DESTINATION_BROKERS: JSON.stringify([
        { name: 'bus', type: 'rabbitmq', url: TEST_RABBITMQ_URL },
        { name: 'stream', type: 'nats', url: TEST_NATS_URL },
      ]),
      LOG_LEVEL: 'warn',
      DELIVERY_BACKOFF_MS: '1000',
      DELIVERY_TIMEOUT_MS: '10000',
    },
  });
  try {
    const token = await t.token('alpha');
    const webhooks = {
      http: await createWebhook(t, token, { url: route.url }),
      rabbitmq: await createWebhook(t, token, {
        destination: { type: 'rabbitmq', broker: 'bus', exchange, routing_key: 'bench' },
      }),
      nats: await createWebhook(t, token, {
        destination: { type: 'nats', broker: 'stream', subject },
      }),
    };
    console.log(`\nburst: ${EVENTS} events at concurrency ${CONCURRENCY} to one webhook`);
    console.log('destination | events/s | publish→arrival p50 ms | p99 ms | vs http events/s');
    let http = NaN;
    for (const [type, id] of Object.entries(webhooks)) {
      const r = await burst(t, id, arrivals);
      if (type === 'http') http = r.perSecond;
      console.log(
        `${type.padEnd(11)} | ${fmt(r.perSecond).padStart(8)} | ${fmt(r.p50).padStart(22)} | ` +
          `${fmt(r.p99).padStart(6)} | ${(r.perSecond / http).toFixed(2)}x`,
      );
    }
  } finally {
    clearInterval(seenHttp);
    await t.close();
    await receiver.close();
    await messages.close();
    await jsm.streams.delete(stream);
    await nc.close();
    await channel.deleteQueue(queue);
    await channel.deleteExchange(exchange);
    await amqpConnection.close();
  }
}

async function fanOutPhase(): Promise<void> {
  const t = await startTestApp({ env: { APP_ROLE: 'api', LOG_LEVEL: 'warn' } });
  try {
    const db = t.app.get(DataSource);
    const token = await t.token('alpha');
    const first = await createWebhook(t, token, { url: 'http://127.0.0.1:9/fan-out' });
    // The other 999 as copies of the first, past the API's per-client limit.
    await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
       SELECT owner_client_id, url, events, secret_encrypted, secret_hint
       FROM webhooks, generate_series(2, $2) WHERE id = $1`,
      [first, FAN_OUT],
    );
    const filter = { 'data.topic': { $prefix: 'Sales' } };
    const { compileFilter } = await import('../src/webhooks/event-filter');
    const compiled = compileFilter(filter);
    const setFilters = (which: 'none' | 'one' | 'all') =>
      db.query(
        `UPDATE webhooks SET filter = CASE WHEN $1 = 'all' OR ($1 = 'one' AND id = $2) THEN $3::jsonb END,
           filter_path = CASE WHEN $1 = 'all' OR ($1 = 'one' AND id = $2) THEN $4::jsonpath END,
           filter_vars = CASE WHEN $1 = 'all' OR ($1 = 'one' AND id = $2) THEN $5::jsonb END`,
        [which, first, JSON.stringify(filter), compiled.jsonpath, JSON.stringify(compiled.vars)],
      );
    const dispatcher = t.app.get(DispatcherService);
    const timings: Record<'none' | 'one' | 'all', number[]> = { none: [], one: [], all: [] };
    const publish = async () => {
      const t0 = performance.now();
      const { deliveryIds } = await dispatcher.publish({
        kind: 'job.started',
        data: { topic: 'Sales weekly', n: Math.random() },
      });
      const ms = performance.now() - t0;
      if (deliveryIds.length !== FAN_OUT) throw new Error(`${deliveryIds.length} deliveries`);
      return ms;
    };
    await publish(); // warm-up: the prepared statement, the caches
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of ['none', 'one', 'all'] as const) {
        await setFilters(which);
        timings[which].push(await publish());
      }
    }
    console.log(`\nfan-out: one event to ${FAN_OUT} webhooks, ${ROUNDS} rounds interleaved`);
    console.log('filters on the 1,000 | publish() median ms | p90 ms | vs none (median)');
    for (const which of ['none', 'one', 'all'] as const) {
      const m = median(timings[which]);
      console.log(
        `${which.padEnd(20)} | ${fmt(m, 1).padStart(19)} | ` +
          `${fmt(percentile(timings[which], 0.9), 1).padStart(6)} | ` +
          `${(m / median(timings.none)).toFixed(2)}x`,
      );
    }
  } finally {
    await t.close();
  }
}

async function main(): Promise<void> {
  console.log(`load average at the start: ${load()}`);
  await fanOutPhase();
  await burstPhase();
  console.log(`\nload average at the end: ${load()}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
