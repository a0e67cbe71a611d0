import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { natsStream, rabbitQueue } from './support/brokers';
import { Json, request } from './support/http';
import { TcpProxy } from './support/tcp-proxy';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { getDelivery, waitForAttempt, waitForDeliveryStatus } from './support/deliveries';

const SECRET = 'whsec_dGVzdC1zZWNyZXQtZm9yLWJyb2tlcnMtMDEyMw==';
const AUTH = 'Bearer broker-receiver-token-0123456789';

/** x-service-signature as a consumer checks it: HMAC-SHA256 hex over the exact body bytes. */
const hmac = (body: Buffer) => createHmac('sha256', SECRET).update(body).digest('hex');

/** Both Standard Webhooks headers checked with the reference library, as a consumer would. */
function standardVerifies(body: Buffer, headers: Record<string, string>): boolean {
  new Webhook(SECRET).verify(body.toString('utf8'), {
    'webhook-id': headers['webhook-id'],
    'webhook-timestamp': headers['webhook-timestamp'],
    'webhook-signature': headers['webhook-signature'],
  });
  return true;
}

/** NATS headers as a plain object (first value of each). */
function natsHeaders(msg: { header?: { keys(): string[]; get(k: string): string } }) {
  const h = msg.header!;
  return Object.fromEntries(h.keys().map((k) => [k, h.get(k)]));
}

describe('broker destinations (RabbitMQ and NATS JetStream, real servers behind a TCP proxy)', () => {
  let t: TestApp;
  let token: string;
  /**
   * A failed wait for a broker's message, rethrown with the delivery as its log shows it:
   * never tried, tried and failed (with what), or still pending.
   */
  const saying =
    (webhookId: string, deliveryId: string) =>
    async (error: Error): Promise<never> => {
      const d = await getDelivery(t, token, webhookId, deliveryId);
      throw new Error(`${error.message}; the delivery: ${JSON.stringify(d)}`);
    };
  const rabbitProxy = new TcpProxy('127.0.0.1', 5672);
  const natsProxy = new TcpProxy('127.0.0.1', 4222);
  let queue: Awaited<ReturnType<typeof rabbitQueue>>;
  let stream: Awaited<ReturnType<typeof natsStream>>;

  beforeAll(async () => {
    await rabbitProxy.start();
    await natsProxy.start();
    queue = await rabbitQueue('meetings');
    stream = await natsStream();
    t = await startTestApp({
      env: {
        DESTINATION_BROKERS: JSON.stringify([
          {
            name: 'bus',
            type: 'rabbitmq',
            url: `amqp://guest:guest@127.0.0.1:${rabbitProxy.port}`,
          },
          { name: 'stream', type: 'nats', url: `nats://127.0.0.1:${natsProxy.port}` },
        ]),
        // Long enough a series for a broker to be away and back within it.
        DELIVERY_MAX_RETRIES: '8',
        DELIVERY_BACKOFF_MS: '200',
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await queue?.close();
    await stream?.close();
    await rabbitProxy.stop();
    await natsProxy.stop();
  });

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });

  async function webhook(destination: Json, extra: Json = {}): Promise<string> {
    const res = await api('POST', '/api/webhooks', {
      events: ['job.started'],
      secret: SECRET,
      destination,
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** Publishes to exactly one webhook: every other one is paused meanwhile. */
  async function publishTo(webhookId: string, data: Json = { n: 1 }) {
    const db = t.app.get(DataSource);
    await db.query(`UPDATE webhooks SET active = (id = $1)`, [webhookId]);
    const { deliveryIds } = await t.app
      .get(DispatcherService)
      .publish({ kind: 'job.started', data });
    expect(deliveryIds).toHaveLength(1);
    return deliveryIds[0];
  }

  it('shows both brokers in /health/ready, connected', async () => {
    const ready = await waitFor(async () => {
      const res = await request(t.baseUrl, 'GET', '/health/ready');
      const b = res.body.brokers;
      return b?.bus?.state === 'connected' && b?.stream?.state === 'connected' && res;
    });
    expect(ready.status).toBe(200);
    expect(ready.body.brokers).toEqual({
      bus: { type: 'rabbitmq', state: 'connected' },
      stream: { type: 'nats', state: 'connected' },
    });
  });

  it('RabbitMQ: the body, persistent JSON, message_id = the delivery id, every header, signatures that verify', async () => {
    const id = await webhook(
      { type: 'rabbitmq', broker: 'bus', exchange: queue.exchange, routing_key: 'meetings' },
      { headers: { Authorization: AUTH } },
    );
    const deliveryId = await publishTo(id, { topic: 'rabbit' });
    const [msg] = await queue.waitForCount(1).catch(saying(id, deliveryId));
    const body = JSON.parse(msg.body.toString('utf8'));
    expect(body).toMatchObject({ event: 'job.started', data: { topic: 'rabbit' } });
    expect(msg.properties).toMatchObject({
      messageId: deliveryId,
      contentType: 'application/json',
      deliveryMode: 2,
      type: 'job.started',
    });
    const headers = msg.properties.headers as Record<string, string>;
    expect(headers).toMatchObject({
      'x-service-event': 'job.started',
      'x-service-delivery': deliveryId,
      'x-service-attempt': '1',
      'webhook-id': deliveryId,
      'content-type': 'application/json',
      Authorization: AUTH,
    });
    expect(headers['x-service-signature']).toBe(hmac(msg.body));
    expect(standardVerifies(msg.body, headers)).toBe(true);

    const delivery = await waitForDeliveryStatus(t, token, id, deliveryId, 'succeeded');
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: null, error: null, response_body: null }),
    ]);
    // A redelivery sends the same message id: the consumer's de-duplication key.
    const again = await api('POST', `/api/webhooks/${id}/deliveries/${deliveryId}/redeliver`);
    expect(again.status).toBe(202);
    const [, second] = await queue.waitForCount(2);
    expect(second.properties.messageId).toBe(deliveryId);
    expect(second.body.equals(msg.body)).toBe(true);
    expect((second.properties.headers as Json)['x-service-attempt']).toBe('2');
  });

  it('RabbitMQ: an unroutable message (returned, mandatory) and a missing exchange are failed attempts with the broker answer', async () => {
    const unroutable = await webhook({
      type: 'rabbitmq',
      broker: 'bus',
      exchange: queue.exchange,
      routing_key: 'nobody-listens',
    });
    const d1 = await publishTo(unroutable);
    // Attempted before the next publish pauses its webhook: a paused webhook's delivery is
    // cancelled unsent.
    const first = await waitForAttempt(t, token, unroutable, d1);
    expect(first.attempts[0]).toMatchObject({ status_code: null, response_body: null });
    expect(first.attempts[0].error).toMatch(/unroutable: 312 NO_ROUTE/);
    const noExchange = await webhook({
      type: 'rabbitmq',
      broker: 'bus',
      exchange: `${queue.exchange}-missing`,
      routing_key: 'meetings',
    });
    const d2 = await publishTo(noExchange);
    const second = await waitForAttempt(t, token, noExchange, d2);
    expect(second.attempts[0].status_code).toBeNull();
    expect(second.attempts[0].error).toMatch(/404.*NOT_FOUND.*no exchange/);
    // Neither took the channel of the routable exchange down with it.
    const ok = await webhook({
      type: 'rabbitmq',
      broker: 'bus',
      exchange: queue.exchange,
      routing_key: 'meetings',
    });
    const before = queue.received.length;
    const d3 = await publishTo(ok);
    await waitForDeliveryStatus(t, token, ok, d3, 'succeeded');
    expect(queue.received.length).toBe(before + 1);
    for (const [w] of [[unroutable], [noExchange]]) {
      await api('PATCH', `/api/webhooks/${w}`, { active: false });
    }
  });

  it('NATS: the body, Nats-Msg-Id = the delivery id, every header, signatures that verify; a redelivery is de-duplicated by the stream', async () => {
    const subject = `${stream.prefix}.meetings`;
    const id = await webhook(
      { type: 'nats', broker: 'stream', subject },
      { headers: { Authorization: AUTH } },
    );
    const deliveryId = await publishTo(id, { topic: 'nats' });
    const [msg] = await stream.waitForCount(1).catch(saying(id, deliveryId));
    expect(msg.subject).toBe(subject);
    expect(JSON.parse(Buffer.from(msg.data).toString('utf8'))).toMatchObject({
      event: 'job.started',
      data: { topic: 'nats' },
    });
    const headers = natsHeaders(msg as never);
    expect(headers).toMatchObject({
      'Nats-Msg-Id': deliveryId,
      'x-service-delivery': deliveryId,
      'x-service-event': 'job.started',
      'x-service-attempt': '1',
      'content-type': 'application/json',
      Authorization: AUTH,
    });
    const bytes = Buffer.from(msg.data);
    expect(headers['x-service-signature']).toBe(hmac(bytes));
    expect(standardVerifies(bytes, headers)).toBe(true);
    const delivery = await waitForDeliveryStatus(t, token, id, deliveryId, 'succeeded');
    expect(delivery.attempts[0]).toMatchObject({ status_code: null, error: null });

    await api('POST', `/api/webhooks/${id}/deliveries/${deliveryId}/redeliver`);
    await waitFor(async () => {
      const d = await getDelivery(t, token, id, deliveryId);
      return d.status === 'succeeded' && d.attempt_count === 2;
    });
    // The stream acknowledged the second publish as a duplicate and kept one message.
    expect(await stream.messages()).toHaveLength(1);
  });

  it('NATS: a subject no stream takes is a failed attempt naming it', async () => {
    const subject = `meb.alpha.nostream.${Date.now()}`;
    const id = await webhook({ type: 'nats', broker: 'stream', subject });
    const deliveryId = await publishTo(id);
    const d = await waitForAttempt(t, token, id, deliveryId);
    expect(d.attempts[0].status_code).toBeNull();
    expect(d.attempts[0].error).toContain(`subject "${subject}"`);
    await api('PATCH', `/api/webhooks/${id}`, { active: false });
  });

  it('a broker that goes away and comes back: attempts fail and retry, nothing is lost, nothing doubles', async () => {
    const rabbit = await webhook({
      type: 'rabbitmq',
      broker: 'bus',
      exchange: queue.exchange,
      routing_key: 'meetings',
    });
    const subject = `${stream.prefix}.outage`;
    const nats = await webhook({ type: 'nats', broker: 'stream', subject });
    const db = t.app.get(DataSource);
    await db.query(`UPDATE webhooks SET active = id IN ($1, $2)`, [rabbit, nats]);
    const rabbitBefore = queue.received.length;
    const natsBefore = (await stream.messages()).length;

    await rabbitProxy.stop();
    await natsProxy.stop();
    const published: string[] = [];
    for (let n = 0; n < 5; n++) {
      const { deliveryIds } = await t.app
        .get(DispatcherService)
        .publish({ kind: 'job.started', data: { outage: n } });
      published.push(...deliveryIds);
    }
    expect(published).toHaveLength(10);
    // Every delivery has failed at least once while the brokers were away.
    await waitFor(
      async () => {
        const [row] = await db.query(
          `SELECT count(*)::int AS n FROM deliveries WHERE id = ANY($1) AND attempt_count > 0`,
          [published],
        );
        return row.n === published.length;
      },
      { timeoutMs: 30000, what: 'a failed attempt of each delivery' },
    );
    const down = await request(t.baseUrl, 'GET', '/health/ready');
    expect(down.status).toBe(200);

    await rabbitProxy.start();
    await natsProxy.start();
    await waitFor(
      async () => {
        const rows = await db.query(`SELECT status FROM deliveries WHERE id = ANY($1)`, [
          published,
        ]);
        return rows.every((r: Json) => r.status === 'succeeded');
      },
      { timeoutMs: 45000, what: 'every delivery to succeed after the brokers came back' },
    );
    const rabbitIds = queue.received.slice(rabbitBefore).map((m) => m.properties.messageId);
    const sentToRabbit = (
      await db.query(`SELECT id FROM deliveries WHERE id = ANY($1) AND webhook_id = $2`, [
        published,
        rabbit,
      ])
    ).map((r: Json) => r.id);
    expect(new Set(rabbitIds)).toEqual(new Set(sentToRabbit));
    const natsMsgs = (await stream.messages()).slice(natsBefore);
    const natsIds = natsMsgs.map((m) => natsHeaders(m as never)['Nats-Msg-Id']);
    // Nats-Msg-Id: a publish the stream took before its acknowledgement was lost is not doubled.
    expect(natsIds).toHaveLength(5);
    expect(new Set(natsIds).size).toBe(5);
    const failedAttempts = await db.query(
      `SELECT a.error FROM delivery_attempts a WHERE a.delivery_id = ANY($1) AND a.error IS NOT NULL`,
      [published],
    );
    expect(failedAttempts.length).toBeGreaterThanOrEqual(10);
    // The broker URL's credentials reach neither the delivery log nor the app's log.
    for (const { error } of failedAttempts) expect(error).not.toContain('guest:guest');
    expect(t.logs.join('\n')).not.toContain('guest:guest');
  });

  it('counts attempts by destination type in /metrics', async () => {
    const text = await (await fetch(`${t.baseUrl}/metrics`)).text();
    expect(text).toMatch(/deliveries_total\{outcome="succeeded",destination="rabbitmq"\} [1-9]/);
    expect(text).toMatch(/deliveries_total\{outcome="succeeded",destination="nats"\} [1-9]/);
    expect(text).toMatch(
      /delivery_attempt_duration_seconds_count\{outcome="failure",destination="nats"\} [1-9]/,
    );
  });

  describe('the destination field', () => {
    it.each([
      [
        'an unknown broker',
        { type: 'rabbitmq', broker: 'nope', exchange: 'x', routing_key: 'k' },
        {},
        'destination.broker',
      ],
      [
        'a broker of another type',
        { type: 'nats', broker: 'bus', subject: 'a.b' },
        {},
        'destination.broker',
      ],
      [
        'a url with a broker destination',
        { type: 'nats', broker: 'stream', subject: 'a.b' },
        { url: 'http://127.0.0.1:9/x' },
        'url',
      ],
      ['an unknown type', { type: 'kafka' }, {}, 'destination.type'],
      [
        'a wildcard subject',
        { type: 'nats', broker: 'stream', subject: 'a.*' },
        {},
        'destination.subject',
      ],
      [
        'a missing routing key',
        { type: 'rabbitmq', broker: 'bus', exchange: 'x' },
        {},
        'destination.routing_key',
      ],
      ['an http destination without url', { type: 'http' }, {}, 'url'],
    ])(
      'refuses %s: 400 naming the field, nothing written',
      async (_, destination, extra, field) => {
        const before = await t.app.get(DataSource).query(`SELECT count(*)::int AS n FROM webhooks`);
        const res = await api('POST', '/api/webhooks', {
          events: ['job.started'],
          secret: SECRET,
          destination,
          ...extra,
        });
        expect(res.status).toBe(400);
        expect(res.body.details.map((d: Json) => d.field)).toContain(field);
        const after = await t.app.get(DataSource).query(`SELECT count(*)::int AS n FROM webhooks`);
        expect(after[0].n).toBe(before[0].n);
      },
    );

    it('PATCH moves a webhook from http to a broker (its url goes) and back (a url is required: 409 without)', async () => {
      const created = await api('POST', '/api/webhooks', {
        url: 'http://127.0.0.1:9/hook',
        events: ['job.started'],
        secret: SECRET,
      });
      const id = created.body.id;
      const moved = await api('PATCH', `/api/webhooks/${id}`, {
        destination: { type: 'nats', broker: 'stream', subject: 'meb.alpha.a' },
      });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({
        url: null,
        destination: { type: 'nats', broker: 'stream', subject: 'meb.alpha.a' },
      });
      // The bodies are valid; they do not fit what the webhook stores (docs/api.md): 409.
      const noUrl = await api('PATCH', `/api/webhooks/${id}`, { destination: { type: 'http' } });
      expect(noUrl.status).toBe(409);
      expect(noUrl.body.details).toEqual([expect.objectContaining({ field: 'url' })]);
      const urlOnBroker = await api('PATCH', `/api/webhooks/${id}`, {
        url: 'http://127.0.0.1:9/x',
      });
      expect(urlOnBroker.status).toBe(409);
      const both = await api('PATCH', `/api/webhooks/${id}`, {
        url: 'http://127.0.0.1:9/x',
        destination: { type: 'nats', broker: 'stream', subject: 'meb.alpha.a' },
      });
      expect(both.status).toBe(400);
      const back = await api('PATCH', `/api/webhooks/${id}`, {
        destination: { type: 'http' },
        url: 'http://127.0.0.1:9/back',
      });
      expect(back.status).toBe(200);
      expect(back.body).toMatchObject({
        url: 'http://127.0.0.1:9/back',
        destination: { type: 'http' },
      });
    });
  });
});

describe('broker destinations: auto-disable and replay as for HTTP', () => {
  let t: TestApp;
  let token: string;
  let queue: Awaited<ReturnType<typeof rabbitQueue>>;

  beforeAll(async () => {
    queue = await rabbitQueue('replayed');
    t = await startTestApp({
      env: {
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: 'amqp://guest:guest@127.0.0.1:5672' },
        ]),
        DELIVERY_MAX_RETRIES: '0',
        WEBHOOK_DISABLE_AFTER_FAILURES: '2',
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await queue?.close();
  });

  it('failed deliveries disable the webhook (failing); once routable, a replay of the failed ones delivers them', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: {
        events: ['job.started'],
        secret: SECRET,
        destination: {
          type: 'rabbitmq',
          broker: 'bus',
          exchange: queue.exchange,
          routing_key: 'not-yet-bound',
        },
      },
    });
    const id = created.body.id as string;
    const dispatcher = t.app.get(DispatcherService);
    const ids: string[] = [];
    for (const n of [1, 2]) {
      ids.push(...(await dispatcher.publish({ kind: 'job.started', data: { n } })).deliveryIds);
    }
    const disabled = await waitFor(async () => {
      const w = (await request(t.baseUrl, 'GET', `/api/webhooks/${id}`, { token })).body;
      return w.disabled_reason === 'failing' && w;
    });
    expect(disabled.active).toBe(false);

    // The receiver fixes its side: the routing key now reaches the queue.
    await request(t.baseUrl, 'PATCH', `/api/webhooks/${id}`, {
      token,
      body: {
        active: true,
        destination: {
          type: 'rabbitmq',
          broker: 'bus',
          exchange: queue.exchange,
          routing_key: 'replayed',
        },
      },
    });
    const replay = await request(t.baseUrl, 'POST', `/api/webhooks/${id}/replay`, {
      token,
      body: { since },
    });
    expect(replay.body).toEqual({ count: 2 });
    const got = await queue.waitForCount(2);
    expect(new Set(got.map((m) => m.properties.messageId))).toEqual(new Set(ids));
  });
});
