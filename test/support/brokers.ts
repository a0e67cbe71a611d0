import * as amqp from 'amqplib';
import { randomBytes } from 'node:crypto';
import { JetStreamManager, NatsConnection, StoredMsg, connect, headers as natsHeaders } from 'nats';
import { waitFor } from './wait-for';

export const TEST_RABBITMQ_URL =
  process.env.TEST_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
export const TEST_NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A message as a RabbitMQ consumer gets it. */
export interface AmqpMessage {
  body: Buffer;
  properties: amqp.MessageProperties;
}

/** The part of a broker of namespace `client` (the default) that test client `alpha` reaches. */
export const ALPHA_PART = 'meb.alpha.';

/**
 * An exchange and a queue of this test's own (random names, on the shared broker), bound by
 * `routingKey`, and what the queue received. The exchange's name begins with `within` (by
 * default the part of the broker client `alpha` may publish to).
 */
export async function rabbitQueue(
  routingKey: string,
  options: { consume?: boolean; within?: string } = {},
) {
  const suffix = randomBytes(4).toString('hex');
  const exchange = `${options.within ?? ALPHA_PART}test-${suffix}`;
  const queue = `meb-test-${suffix}`;
  const connection = await amqp.connect(TEST_RABBITMQ_URL);
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'direct', { durable: false, autoDelete: false });
  await channel.assertQueue(queue, { durable: false });
  await channel.bindQueue(queue, exchange, routingKey);
  const received: AmqpMessage[] = [];
  if (options.consume !== false) {
    await channel.consume(
      queue,
      (msg) => msg && received.push({ body: msg.content, properties: msg.properties }),
      { noAck: true },
    );
  }
  return {
    exchange,
    queue,
    channel,
    /** Puts a message straight into the queue, as something other than the service would. */
    sendRaw: (body: Buffer, properties: amqp.Options.Publish) =>
      channel.sendToQueue(queue, body, properties),
    received,
    waitForCount: (n: number) =>
      waitFor(() => received.length >= n && received, { what: `${n} RabbitMQ messages` }),
    async close() {
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.deleteExchange(exchange).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/**
 * A JetStream stream of this test's own, taking `<prefix>.>`, and a reader of its messages; the
 * prefix begins with `within` (by default the part of the broker client `alpha` may publish to).
 */
export async function natsStream(options: { within?: string } = {}) {
  const suffix = randomBytes(4).toString('hex');
  const name = `MEB_TEST_${suffix}`;
  const prefix = `${options.within ?? ALPHA_PART}test${suffix}`;
  const nc: NatsConnection = await connect({ servers: TEST_NATS_URL });
  const jsm: JetStreamManager = await nc.jetstreamManager();
  await jsm.streams.add({ name, subjects: [`${prefix}.>`], duplicate_window: 60_000_000_000 });
  const messages = async (): Promise<StoredMsg[]> => {
    const info = await jsm.streams.info(name);
    const out: StoredMsg[] = [];
    if (info.state.messages === 0) return out;
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      out.push(await jsm.streams.getMessage(name, { seq }));
    }
    return out;
  };
  return {
    name,
    prefix,
    messages,
    /** Publishes straight to the stream, as something other than the service would. */
    publishRaw: async (subject: string, body: Buffer, headers: Record<string, string>) => {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(headers)) h.set(k, v);
      await nc.jetstream().publish(subject, body, { headers: h });
    },
    waitForCount: (n: number) =>
      waitFor(
        async () => {
          const all = await messages();
          return all.length >= n && all;
        },
        { what: `${n} messages in stream ${name}` },
      ),
    async close() {
      await jsm.streams.delete(name).catch(() => undefined);
      await nc.close();
    },
  };
}
