import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { EVENT_EXAMPLES } from '../src/webhooks/event-examples';
import { natsStream } from './support/brokers';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { waitForDeliveryStatus } from './support/deliveries';

const SECRET = 'whsec_dGVtcGxhdGUtc2lnbmluZy1zZWNyZXQtMDEyMw==';
const hmac = (body: Buffer) => createHmac('sha256', SECRET).update(body).digest('hex');

/** Both signatures over exactly the bytes that arrived, as a receiver checks them. */
function verifies(body: Buffer, headers: Record<string, string | undefined>): void {
  expect(headers['x-service-signature']).toBe(hmac(body));
  new Webhook(SECRET).verify(body.toString('utf8'), {
    'webhook-id': headers['webhook-id']!,
    'webhook-timestamp': headers['webhook-timestamp']!,
    'webhook-signature': headers['webhook-signature']!,
  });
}

const RECORDING_TEMPLATE =
  '{"meeting": data.topic, "files": [data.files.{"type": file_type, "url": download_url}]}';

describe('templates: what a webhook is sent, signed and logged (http and NATS)', () => {
  let t: TestApp;
  let token: string;
  let receiver: Receiver;
  let stream: Awaited<ReturnType<typeof natsStream>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    stream = await natsStream();
    t = await startTestApp({
      env: {
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'stream', type: 'nats', url: 'nats://127.0.0.1:4222' },
        ]),
        // Long enough for a loaded machine, short enough for the runaway ones to end soon.
        TEMPLATE_TIMEOUT_MS: '300',
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await stream?.close();
  });

  /** The first `n` requests to `path`, once they have come. */
  const requestsTo = (path: string, n: number) =>
    waitFor(() => receiver.requests(path).length >= n && receiver.requests(path), {
      what: `${n} requests to ${path}`,
    });

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });

  async function webhook(fields: Json): Promise<string> {
    const res = await api('POST', '/api/webhooks', {
      events: ['operation.complete', 'job.started'],
      secret: SECRET,
      ...fields,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** Publishes `kind` (its example data) to the given webhooks only; their deliveries in order. */
  async function publish(webhookIds: string[], kind = 'operation.complete'): Promise<string[]> {
    const db = t.app.get(DataSource);
    await db.query(`UPDATE webhooks SET active = (id = ANY($1::uuid[]))`, [webhookIds]);
    const example = EVENT_EXAMPLES[kind];
    const { deliveryIds } = await t.app
      .get(DispatcherService)
      .publish({ kind: kind as never, data: example.data, source: example.source as never });
    const rows: { id: string; webhook_id: string }[] = await db.query(
      `SELECT id, webhook_id FROM deliveries WHERE id = ANY($1::uuid[])`,
      [deliveryIds],
    );
    return webhookIds.map((w) => rows.find((r) => r.webhook_id === w)!.id);
  }

  it('refuses a template with a syntax error (naming template and the position), or too long; PATCH null removes it', async () => {
    const bad = await api('POST', '/api/webhooks', {
      url: receiver.route({}, 'x').url,
      events: ['job.started'],
      secret: SECRET,
      template: '{"a": (1 + }',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('template');
    expect(bad.body.details[0].message).toMatch(/position 12/);
    const long = await api('POST', '/api/webhooks', {
      url: receiver.route({}, 'x').url,
      events: ['job.started'],
      secret: SECRET,
      template: `{"a": "${'x'.repeat(9000)}"}`,
    });
    expect(long.status).toBe(400);
    expect(long.body.details[0].field).toBe('template');
    const id = await webhook({ url: receiver.route({}, 'x').url, template: '{"a": 1}' });
    expect((await api('GET', `/api/webhooks/${id}`)).body.template).toBe('{"a": 1}');
    const removed = await api('PATCH', `/api/webhooks/${id}`, { template: null });
    expect(removed.status).toBe(200);
    expect(removed.body.template).toBeNull();
  });

  it('http: sends the output, signed over the bytes sent, shown in the delivery log; redeliver resends them, replay renders again', async () => {
    const { url, path } = receiver.route({ shaped: true }, 'templated');
    const id = await webhook({ url, template: RECORDING_TEMPLATE });
    const [d] = await publish([id]);
    const [first] = await requestsTo(path, 1);
    const expected = {
      meeting: 'Quarterly all-hands',
      files: [
        {
          type: 'MP4',
          url: 'https://bridge.example.com/api/recordings/85746065432/files/f1a2b3c4/download',
        },
        {
          type: 'TRANSCRIPT',
          url: 'https://bridge.example.com/api/recordings/85746065432/files/f5e6d7c8/download',
        },
      ],
    };
    expect(JSON.parse(first.body.toString('utf8'))).toEqual(expected);
    verifies(first.body, first.headers as Record<string, string>);
    const logged = await waitForDeliveryStatus(t, token, id, d, 'succeeded');
    expect(logged.payload).toEqual(expected);

    // A new template: a redelivery still sends the bytes first sent; a replay, the new output.
    expect(
      (await api('PATCH', `/api/webhooks/${id}`, { template: '{"changed": data.topic}' })).status,
    ).toBe(200);
    expect((await api('POST', `/api/webhooks/${id}/deliveries/${d}/redeliver`)).status).toBe(202);
    const [, again] = await requestsTo(path, 2);
    expect(again.body.equals(first.body)).toBe(true);
    verifies(again.body, again.headers as Record<string, string>);
    await waitForDeliveryStatus(t, token, id, d, 'succeeded');
    const replay = await api('POST', `/api/webhooks/${id}/replay`, {
      since: new Date(Date.now() - 60_000).toISOString(),
      status: 'succeeded',
    });
    expect(replay.body.count).toBe(1);
    const [, , replayed] = await requestsTo(path, 3);
    expect(JSON.parse(replayed.body.toString('utf8'))).toEqual({ changed: 'Quarterly all-hands' });
    verifies(replayed.body, replayed.headers as Record<string, string>);
  });

  it('NATS: publishes the output, its headers signing those bytes', async () => {
    const id = await webhook({
      destination: { type: 'nats', broker: 'stream', subject: `${stream.prefix}.meetings` },
      template: '[event, data.topic]',
    });
    const [d] = await publish([id], 'job.started');
    const [msg] = await stream.waitForCount(1);
    const body = Buffer.from(msg.data);
    expect(JSON.parse(body.toString('utf8'))).toEqual(['job.started', 'Quarterly all-hands']);
    const h = msg.header!;
    verifies(
      body,
      Object.fromEntries(h.keys().map((k) => [k, h.get(k)])) as Record<string, string>,
    );
    await waitForDeliveryStatus(t, token, id, d, 'succeeded');
  });

  it.each([
    ['never ends', '($f := function($n) { $f($n + 1) }; {"a": $f(0)})', /nests deeper|ran longer/],
    ['spins', '{"a": $count([1..10000000].($ * 2))}', /ran longer|memory/],
    // Of the inline subset (docs/templates.md#how-templates-are-evaluated): the service's process
    // gives up on it at its bounds, and an evaluator decides.
    [
      'multiplies its steps within the inline subset',
      '{"a": $count($$.**.($$.**.($$.**.($$.**))))}',
      /ran longer/,
    ],
    ['grows without bound', '($f := function($s) { $f($s & $s) }; {"a": $f("x")})', /template: /],
    ['yields too much', '{"a": $pad("", 300000, "x")}', /262144|ran longer/],
    ['calls what is not there', '{"a": $require("fs")}', /template: /],
    ['yields a string', 'data.topic', /not a JSON object or array/],
    ['yields nothing', 'data.nothing', /yielded nothing/],
  ])(
    'fails at once, without retries, a template that %s, and holds up no other delivery',
    async (_what, template, error) => {
      const { url, path } = receiver.route({ shaped: true }, 'bad');
      const other = receiver.route({}, 'other');
      const bad = await webhook({ url, template });
      const good = await webhook({ url: other.url });
      const [b, g] = await publish([bad, good]);
      await waitForDeliveryStatus(t, token, good, g, 'succeeded');
      const failed = await waitForDeliveryStatus(t, token, bad, b, 'failed');
      expect(failed.attempts).toHaveLength(1);
      expect(failed.last_error).toMatch(/^template: /);
      expect(failed.last_error).toMatch(error);
      expect(failed.last_error).not.toMatch(/PATH=|HOME=/);
      expect(receiver.requests(path)).toHaveLength(0);
    },
  );

  it('gives a template nothing of the process: what reaches for it yields nothing or fails', async () => {
    const { url, path } = receiver.route({ shaped: true }, 'process');
    const id = await webhook({
      url,
      template:
        '{"a": $$.constructor.constructor("return process")(), "b": $string.constructor, ' +
        '"c": $eval("$env"), "d": $lookup($, "constructor")}',
    });
    const [d] = await publish([id]);
    const done = await waitFor(async () => {
      const got = await api('GET', `/api/webhooks/${id}/deliveries/${d}`);
      return got.body.status !== 'pending' && got.body;
    });
    const sent = receiver.requests(path).map((r) => r.body.toString('utf8'));
    expect(`${JSON.stringify(done)} ${sent.join(' ')}`).not.toMatch(/PATH|HOME|pid|env"?:\s*\{/);
    if (done.status === 'succeeded') expect(JSON.parse(sent[0])).toEqual({});
  });

  describe('POST /api/templates/render', () => {
    it('renders on the example body of a kind, or on a body given', async () => {
      const res = await api('POST', '/api/templates/render', {
        template: '{"text": "Started: " & data.topic}',
        type: 'http',
        event: 'job.started',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        output: { text: 'Started: Quarterly all-hands' },
        bytes: 39,
        warnings: [],
      });
      const own = await api('POST', '/api/templates/render', {
        template: '[data.n]',
        body: { event: 'job.started', data: { n: 7 } },
      });
      expect(own.body.output).toEqual([7]);
    });

    it("shows a chat type's built-in message when there is no template, for every kind", async () => {
      const kinds = (await api('GET', '/api/event-types')).body.data.map((k: Json) => k.name);
      for (const type of ['slack', 'teams', 'discord']) {
        for (const event of kinds) {
          const res = await api('POST', '/api/templates/render', { template: null, type, event });
          expect([type, event, res.status]).toEqual([type, event, 200]);
          expect(res.body.bytes).toBeGreaterThan(20);
        }
      }
    });

    it('warns of mentions left unescaped, and refuses a failing template naming it', async () => {
      const warned = await api('POST', '/api/templates/render', {
        template: '{"text": "<!channel> " & data.topic}',
        type: 'slack',
        event: 'job.started',
      });
      expect(warned.status).toBe(200);
      expect(warned.body.warnings).toEqual([expect.stringContaining('<!channel>')]);
      const refused = await api('POST', '/api/templates/render', {
        template: '{"text": "x", "blocks": [1..51].{"type": "divider"}}',
        type: 'slack',
        event: 'job.started',
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details[0].field).toBe('template');
      expect(refused.body.details[0].message).toMatch(/51 blocks/);
      const none = await api('POST', '/api/templates/render', {
        template: 'data.nothing',
        event: 'job.started',
      });
      expect(none.status).toBe(400);
      expect(none.body.details[0].message).toMatch(/yielded nothing/);
    });

    it('needs webhooks:read', async () => {
      const res = await request(t.baseUrl, 'POST', '/api/templates/render', {
        body: { template: null, event: 'job.started' },
      });
      expect(res.status).toBe(401);
    });
  });
});
