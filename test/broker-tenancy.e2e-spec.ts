/**
 * Clients sharing a broker (docs/destinations.md#clients-sharing-a-broker), against the real
 * RabbitMQ and NATS: what one client may name is refused at create and PATCH, and a row written
 * past those rules (as one stored before them would be) is refused again at send, with nothing
 * published; one client's message never fails another's deliveries; clients never see where a
 * broker is. Client `alpha` plays alice, `beta` bob.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { DataSource } from 'typeorm';
import { BrokerConfig } from '../src/config/config.types';
import { DispatcherService } from '../src/dispatcher/dispatcher.service';
import { RabbitMqBroker } from '../src/dispatcher/destinations/rabbitmq.destination';
import { Deadline, OutgoingMessage } from '../src/dispatcher/destinations/transport';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { TEST_NATS_URL, TEST_RABBITMQ_URL, natsStream, rabbitQueue } from './support/brokers';
import { waitForDeliveryStatus } from './support/deliveries';
import { Json, request } from './support/http';
import { ClientName, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';

const SECRET = 'whsec_dGVuYW5jeS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5';

/** A port nothing listens on: a broker there refuses every connection. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('clients sharing a broker', () => {
  let t: TestApp;
  const tokens = {} as Record<ClientName, string>;
  let downPort: number;
  let downNatsPort: number;
  // Alice's own consumers: a queue bound to her exchange and to amq.topic, and a stream.
  let alice: Awaited<ReturnType<typeof rabbitQueue>>;
  let aliceStream: Awaited<ReturnType<typeof natsStream>>;
  // A broker shared whole (namespace shared): both clients publish to this exchange.
  let shared: Awaited<ReturnType<typeof rabbitQueue>>;

  beforeAll(async () => {
    downPort = await closedPort();
    downNatsPort = await closedPort();
    alice = await rabbitQueue('alice-key');
    await alice.channel.bindQueue(alice.queue, 'amq.topic', 'alice-key');
    aliceStream = await natsStream();
    shared = await rabbitQueue('jobs', { within: 'tenancy-shared.' });
    t = await startTestApp({
      env: {
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: TEST_RABBITMQ_URL },
          { name: 'stream', type: 'nats', url: TEST_NATS_URL },
          { name: 'own', type: 'rabbitmq', url: TEST_RABBITMQ_URL, namespace: 'shared' },
          { name: 'down', type: 'rabbitmq', url: `amqp://guest:guest@127.0.0.1:${downPort}` },
          { name: 'gone', type: 'nats', url: `nats://127.0.0.1:${downNatsPort}` },
        ]),
        DELIVERY_MAX_RETRIES: '0',
        // Nothing here is about disabling.
        WEBHOOK_DISABLE_AFTER_FAILURES: '0',
      },
    });
    tokens.alpha = await t.token('alpha');
    tokens.beta = await t.token('beta');
  });
  afterAll(async () => {
    await t?.close();
    await alice?.close();
    await aliceStream?.close();
    await shared?.close();
  });

  const api = (client: ClientName, method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token: tokens[client], body });
  const db = () => t.app.get(DataSource);
  const webhookCount = async () =>
    (await db().query(`SELECT count(*)::int AS n FROM webhooks`))[0].n as number;

  async function create(client: ClientName, body: Json): Promise<string> {
    const res = await api(client, 'POST', '/api/webhooks', {
      events: ['job.started'],
      secret: SECRET,
      ...body,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** A 400 naming `field`, and no webhook written. */
  async function refused(
    client: ClientName,
    body: Json,
    field: string,
    status = 400,
  ): Promise<Json> {
    const before = await webhookCount();
    const res = await api(client, 'POST', '/api/webhooks', {
      events: ['job.started'],
      secret: SECRET,
      ...body,
    });
    expect({ status: res.status, fields: res.body.details?.map((d: Json) => d.field) }).toEqual({
      status,
      fields: [field],
    });
    expect(await webhookCount()).toBe(before);
    return res.body;
  }

  /**
   * Writes a destination and headers straight to a webhook's row, past every API rule: a row
   * stored before the rules, or under another configuration.
   */
  async function storeRaw(id: string, destination: Json, headers?: Record<string, string>) {
    const cipher = new SecretCipherService(t.config);
    await db().query(
      `UPDATE webhooks SET destination = $2::jsonb, url = NULL,
         headers_encrypted = $3, headers_masked = $4::jsonb WHERE id = $1`,
      [
        id,
        JSON.stringify(destination),
        headers ? cipher.encrypt(JSON.stringify(headers), 'webhook-headers') : null,
        headers ? JSON.stringify(headers) : null,
      ],
    );
  }

  /** Publishes `n` events to exactly the given webhooks (every other one paused meanwhile). */
  async function publishTo(webhookIds: string[], n = 1): Promise<string[]> {
    await db().query(`UPDATE webhooks SET active = (id = ANY($1::uuid[]))`, [webhookIds]);
    const ids: string[] = [];
    const dispatcher = t.app.get(DispatcherService);
    for (let i = 0; i < n; i++) {
      ids.push(...(await dispatcher.publish({ kind: 'job.started', data: { i } })).deliveryIds);
    }
    return ids;
  }

  describe('at create and PATCH', () => {
    it.each([
      ['$JS.API.STREAM.PURGE.ALICE'],
      ['$KV.config.key'],
      ['$SYS.REQ.SERVER.PING'],
      ['_INBOX.abc'],
      ['meb.beta.*'],
      ['meb.beta.>'],
      ['meb.beta.a\u0000'],
      ['meb.beta.\ud800'],
      ['meb.beta.a b'],
      ['meb.beta..a'],
      ['meb.beta.'],
    ])('NATS subject %j → 400 naming destination.subject', async (subject) => {
      const body = await refused(
        'beta',
        { destination: { type: 'nats', broker: 'stream', subject } },
        'destination.subject',
      );
      expect(body.message).toBeDefined();
    });

    // Outside the client's part is 403 (docs/destinations.md): not the client's to use.
    it.each([
      ['alice’s queue by the default exchange', '', 'destination.exchange', 403],
      ['amq.topic', 'amq.topic', 'destination.exchange', 400],
      ['amq.direct', 'amq.direct', 'destination.exchange', 400],
      ['alice’s exchange', 'ALICE', 'destination.exchange', 403],
      ['an exchange with U+0000', 'meb.beta.a\u0000', 'destination.exchange', 400],
      ['an exchange with a lone surrogate', 'meb.beta.\udc00', 'destination.exchange', 400],
      ['an exchange of 256 characters', `meb.beta.${'x'.repeat(247)}`, 'destination.exchange', 400],
    ])('RabbitMQ: %s → %s naming %s', async (_, exchange, field, status) => {
      await refused(
        'beta',
        {
          destination: {
            type: 'rabbitmq',
            broker: 'bus',
            exchange: exchange === 'ALICE' ? alice.exchange : exchange,
            routing_key: alice.queue,
          },
        },
        field,
        status,
      );
    });

    it('RabbitMQ: a routing key with U+0000 or a lone surrogate → 400 naming destination.routing_key', async () => {
      for (const routing_key of ['a\u0000', '\ud800']) {
        await refused(
          'beta',
          { destination: { type: 'rabbitmq', broker: 'bus', exchange: 'meb.beta.x', routing_key } },
          'destination.routing_key',
        );
      }
    });

    it('the part of a broker is named in the refusal (403); a shared broker takes any exchange but amq.*', async () => {
      const body = await refused(
        'beta',
        { destination: { type: 'nats', broker: 'stream', subject: `${aliceStream.prefix}.x` } },
        'destination.subject',
        403,
      );
      expect(body.details[0].message).toContain('must begin with "meb.beta."');
      await create('beta', {
        destination: { type: 'rabbitmq', broker: 'own', exchange: '', routing_key: 'q' },
      });
      await refused(
        'beta',
        {
          destination: { type: 'rabbitmq', broker: 'own', exchange: 'amq.topic', routing_key: 'q' },
        },
        'destination.exchange',
      );
    });

    it.each([
      ['rabbitmq', 'CC'],
      ['rabbitmq', 'bcc'],
      ['rabbitmq', 'Bcc'],
      ['rabbitmq', 'x-death'],
      ['nats', 'Nats-Rollup'],
      ['nats', 'nats-expected-last-sequence'],
    ])('%s: custom header %s → 400 naming headers.<name>', async (type, name) => {
      const destination =
        type === 'rabbitmq'
          ? { type, broker: 'bus', exchange: 'meb.beta.x', routing_key: 'k' }
          : { type, broker: 'stream', subject: 'meb.beta.x' };
      await refused(
        'beta',
        { destination, headers: { Authorization: 'Bearer x', [name]: 'alice.key' } },
        `headers.${name}`,
      );
    });

    it('PATCH: headers the broker acts on, or a move to that broker with them, → 400; nothing changes', async () => {
      const rabbit = await create('beta', {
        destination: { type: 'rabbitmq', broker: 'bus', exchange: 'meb.beta.x', routing_key: 'k' },
      });
      const addCc = await api('beta', 'PATCH', `/api/webhooks/${rabbit}`, {
        headers: { CC: 'alice-key' },
      });
      expect(addCc.status).toBe(400);
      expect(addCc.body.details).toEqual([expect.objectContaining({ field: 'headers.CC' })]);

      const http = await create('beta', {
        url: 'http://127.0.0.1:9/hook',
        headers: { BCC: 'on http it is only a header' },
      });
      const move = await api('beta', 'PATCH', `/api/webhooks/${http}`, {
        destination: { type: 'rabbitmq', broker: 'bus', exchange: 'meb.beta.x', routing_key: 'k' },
      });
      expect(move.status).toBe(400);
      expect(move.body.details).toEqual([expect.objectContaining({ field: 'headers.BCC' })]);
      const after = await api('beta', 'GET', `/api/webhooks/${http}`);
      expect(after.body.destination).toEqual({ type: 'http' });
      // Moved with its headers replaced, it is accepted.
      const moved = await api('beta', 'PATCH', `/api/webhooks/${http}`, {
        destination: { type: 'rabbitmq', broker: 'bus', exchange: 'meb.beta.x', routing_key: 'k' },
        headers: null,
      });
      expect(moved.status).toBe(200);
    });

    it('an unknown broker → 400 naming destination.broker, listing no configured broker', async () => {
      const body = await refused(
        'beta',
        {
          destination: {
            type: 'rabbitmq',
            broker: 'nope',
            exchange: 'meb.beta.x',
            routing_key: 'k',
          },
        },
        'destination.broker',
      );
      const text = JSON.stringify(body);
      for (const name of ['bus', 'own', 'down']) expect(text).not.toContain(`${name}`);
    });
  });

  describe('at send: a row past the rules publishes nothing', () => {
    it('bob cannot land a message where alice’s consumers read (her queue, her exchange, amq.topic, her stream)', async () => {
      const bob = await create('beta', {
        destination: { type: 'rabbitmq', broker: 'bus', exchange: 'meb.beta.x', routing_key: 'k' },
      });
      const cases: [Json, string][] = [
        [{ type: 'rabbitmq', broker: 'bus', exchange: '', routing_key: alice.queue }, 'exchange'],
        [
          { type: 'rabbitmq', broker: 'bus', exchange: alice.exchange, routing_key: 'alice-key' },
          'exchange',
        ],
        [
          { type: 'rabbitmq', broker: 'bus', exchange: 'amq.topic', routing_key: 'alice-key' },
          'exchange',
        ],
        [{ type: 'nats', broker: 'stream', subject: `${aliceStream.prefix}.x` }, 'subject'],
        [
          { type: 'nats', broker: 'stream', subject: `$JS.API.STREAM.PURGE.${aliceStream.name}` },
          'subject',
        ],
      ];
      for (const [destination, field] of cases) {
        await storeRaw(bob, destination);
        const [deliveryId] = await publishTo([bob]);
        const d = await waitForDeliveryStatus(t, tokens.beta, bob, deliveryId, 'failed');
        expect(d.attempts).toHaveLength(1);
        expect(d.attempts[0].error).toMatch(new RegExp(`^not published: destination\\.${field}`));
        expect(d.last_error).toBe(d.attempts[0].error);
      }
      // Refused before publishing: once the attempts are recorded, nothing can arrive later.
      expect(alice.received).toEqual([]);
      expect(await aliceStream.messages()).toEqual([]);
    });

    it('a broker shared whole: bob’s CC header fails bob’s deliveries only, alice’s 20 all succeed', async () => {
      const destination = {
        type: 'rabbitmq',
        broker: 'own',
        exchange: shared.exchange,
        routing_key: 'jobs',
      };
      const aliceHook = await create('alpha', { destination });
      const bobHook = await create('beta', { destination });
      await storeRaw(bobHook, destination, { CC: 'jobs' });
      const ids = await publishTo([aliceHook, bobHook], 20);
      expect(ids).toHaveLength(40);
      const rows = await waitFor(
        async () => {
          const r = await db().query(
            `SELECT d.id, d.webhook_id, d.status, d.last_error FROM deliveries d
              WHERE d.id = ANY($1::uuid[])`,
            [ids],
          );
          return r.every((row: Json) => row.status !== 'pending') && r;
        },
        { what: 'every delivery of both clients to end' },
      );
      const of = (hook: string) => rows.filter((r: Json) => r.webhook_id === hook);
      expect(of(aliceHook).map((r: Json) => [r.status, r.last_error])).toEqual(
        Array(20).fill(['succeeded', null]),
      );
      for (const r of of(bobHook)) {
        expect(r.status).toBe('failed');
        expect(r.last_error).toMatch(/^not published: headers\.CC: RabbitMQ routes/);
      }
      await shared.waitForCount(20);
      expect(shared.received.map((m) => m.properties.messageId).sort()).toEqual(
        of(aliceHook)
          .map((r: Json) => r.id)
          .sort(),
      );
    });

    it('a platform event reaches alice’s part of the broker (the delivery leased as it was stored)', async () => {
      const hook = await create('alpha', {
        destination: {
          type: 'rabbitmq',
          broker: 'bus',
          exchange: alice.exchange,
          routing_key: 'alice-key',
        },
      });
      await db().query(`UPDATE webhooks SET active = (id = $1)`, [hook]);
      const before = alice.received.length;
      const uuid = `tenancy-${randomBytes(6).toString('hex')}`;
      expect((await sendZoomEvent(t.baseUrl, meetingStarted(uuid))).status).toBe(200);
      const [message] = await waitFor(
        () => alice.received.length > before && alice.received.slice(before),
        { what: 'the notification in alice’s queue' },
      );
      const [row] = await db().query(`SELECT status FROM deliveries WHERE id = $1`, [
        message.properties.messageId,
      ]);
      expect(row).toEqual({ status: expect.stringMatching(/pending|succeeded/) });
    });

    it('a header stored before the rule on NATS (Nats-Rollup) is refused at send', async () => {
      const hook = await create('alpha', {
        destination: { type: 'nats', broker: 'stream', subject: `${aliceStream.prefix}.x` },
      });
      await storeRaw(
        hook,
        { type: 'nats', broker: 'stream', subject: `${aliceStream.prefix}.x` },
        { 'Nats-Rollup': 'all' },
      );
      const [deliveryId] = await publishTo([hook]);
      const d = await waitForDeliveryStatus(t, tokens.alpha, hook, deliveryId, 'failed');
      expect(d.last_error).toMatch(/^not published: headers\.Nats-Rollup/);
      expect(await aliceStream.messages()).toEqual([]);
    });
  });

  describe('never where a broker is', () => {
    it('the delivery log names the broker and why, not its address', async () => {
      const rabbit = await create('alpha', {
        destination: {
          type: 'rabbitmq',
          broker: 'down',
          exchange: 'meb.alpha.x',
          routing_key: 'k',
        },
      });
      const nats = await create('alpha', {
        destination: { type: 'nats', broker: 'gone', subject: 'meb.alpha.x' },
      });
      const ids = await publishTo([rabbit, nats]);
      const ends = await Promise.all(
        ids.map(async (id) => {
          const row = await db().query(`SELECT webhook_id FROM deliveries WHERE id = $1`, [id]);
          return waitForDeliveryStatus(t, tokens.alpha, row[0].webhook_id, id, 'failed');
        }),
      );
      const errors = ends.map((d) => [d.last_error, d.attempts[0].error]).flat();
      expect(new Set(errors)).toEqual(
        new Set([
          'RabbitMQ broker "down" unreachable (connection refused)',
          'NATS broker "gone" unreachable (connection refused)',
        ]),
      );
      const seen = JSON.stringify(ends);
      expect(seen).not.toContain(String(downPort));
      expect(seen).not.toContain('127.0.0.1');
      // Operators still read where it failed in the service's log.
      expect(t.logs.join('\n')).toContain(`127.0.0.1:${downPort}`);
    });

    it('/health/ready, unauthenticated, shows each broker’s state and a reason, not its address', async () => {
      const ready = await waitFor(async () => {
        const res = await request(t.baseUrl, 'GET', '/health/ready');
        return res.body.brokers?.down?.error && res.body.brokers?.gone?.error && res;
      });
      expect(ready.body.brokers.down).toEqual({
        type: 'rabbitmq',
        state: 'reconnecting',
        error: 'connection refused',
      });
      expect(ready.body.brokers.gone).toMatchObject({ type: 'nats', error: 'connection refused' });
      expect(ready.text).not.toContain(String(downPort));
      expect(ready.text).not.toContain(String(downNatsPort));
      expect(ready.text).not.toContain('127.0.0.1');
    });
  });
});

describe('RabbitMQ channels: one client’s message never closes the channel another’s use', () => {
  const config: BrokerConfig = {
    name: 'bus',
    type: 'rabbitmq',
    url: TEST_RABBITMQ_URL,
    namespace: 'shared',
    prefix: '',
  };
  let broker: RabbitMqBroker;
  let queue: Awaited<ReturnType<typeof rabbitQueue>>;

  beforeAll(async () => {
    broker = new RabbitMqBroker(config, 10_000);
    queue = await rabbitQueue('jobs', { within: 'channels.' });
  });
  afterAll(async () => {
    await broker?.close();
    await queue?.close();
  });

  const message = (n: number, headers: Record<string, string> = {}): OutgoingMessage => ({
    deliveryId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    event: 'job.started',
    attempt: 1,
    body: Buffer.from(`{"n":${n}}`),
    headers: { 'x-service-attempt': '1', ...headers },
  });

  it('bob’s message the server refuses (CC as text) fails bob alone, and his channel opens again', async () => {
    // Past every check of the service: the transport is reached directly.
    const publish = (client: string, m: OutgoingMessage) =>
      broker.publish(client, queue.exchange, 'jobs', m, new Deadline(20_000));
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, n) => publish('alpha', message(n))),
      publish('beta', message(100, { CC: 'jobs' })),
      ...Array.from({ length: 10 }, (_, n) => publish('alpha', message(10 + n))),
    ]);
    const bob = results[10];
    const aliceResults = results.filter((_, i) => i !== 10);
    expect(aliceResults.map((r) => [r.ok, r.error])).toEqual(Array(20).fill([true, null]));
    expect(bob.ok).toBe(false);
    expect(bob.error).toMatch(/unacceptable_type_in_header.*CC/);
    // His channel is gone and opens again for his next message.
    const again = await publish('beta', message(101));
    expect(again).toMatchObject({ ok: true, error: null });
    await queue.waitForCount(21);
  });
});
