import { DataSource } from 'typeorm';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { EVENT_EXAMPLES } from '../src/webhooks/event-examples';
import { SUBSCRIPTION_EVENTS } from '../src/webhooks/subscription-events';
import { FakeChat } from './support/fake-chat';
import { Json, request } from './support/http';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { waitForDeliveryStatus } from './support/deliveries';

const SECRET = 'chat-webhook-secret-0123456789';
const SLACK = '/services/T0001/B0001/slackTokenAAAA';
const DISCORD = '/api/webhooks/123456/discordTokenBBBB';
const TEAMS = '/workflows/teamsFlowCCCC';
const TOOLS = [
  ['slack', SLACK],
  ['discord', DISCORD],
  ['teams', TEAMS],
] as const;

/** Every string of a JSON value, joined: what a message shows, wherever it sits. */
const textOf = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null
      ? Object.values(value).map(textOf).join('\n')
      : '';

describe('chat destinations (Slack, Teams, Discord) against fakes that refuse what the tools refuse', () => {
  const chat = new FakeChat();
  let t: TestApp;
  let token: string;
  let n = 0;

  beforeAll(async () => {
    await chat.start();
    t = await startTestApp({
      env: {
        CHAT_EXTRA_HOSTS: chat.host,
        DELIVERY_MAX_RETRIES: '3',
        // A loaded machine must not stop the templates these cases send on purpose.
        TEMPLATE_TIMEOUT_MS: '500',
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await chat.stop();
  });

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });

  /** A chat webhook at a path of its own, so that its requests can be told apart. */
  async function chatWebhook(
    type: string,
    base: string,
    extra: Json = {},
  ): Promise<{ id: string; path: string }> {
    const path = `${base}x${n++}`;
    const res = await api('POST', '/api/webhooks', {
      url: chat.url(path),
      events: [...SUBSCRIPTION_EVENTS],
      secret: SECRET,
      destination: { type },
      ...extra,
    });
    expect(res.status).toBe(201);
    return { id: res.body.id as string, path };
  }

  /** Publishes `kind` (its example data, changed by `data`) to the given webhooks only. */
  async function publish(webhookIds: string[], kind: string, data: Json = {}): Promise<string[]> {
    const db = t.app.get(DataSource);
    await db.query(`UPDATE webhooks SET active = (id = ANY($1::uuid[]))`, [webhookIds]);
    const example = EVENT_EXAMPLES[kind];
    const { deliveryIds } = await t.app.get(DispatcherService).publish({
      kind: kind as never,
      data: { ...(example.data as object), ...data },
      source: example.source as never,
    });
    // In the order of `webhookIds`.
    const rows: { id: string; webhook_id: string }[] = await db.query(
      `SELECT id, webhook_id FROM deliveries WHERE id = ANY($1::uuid[])`,
      [deliveryIds],
    );
    return webhookIds.map((w) => rows.find((r) => r.webhook_id === w)!.id);
  }

  /** POST /api/webhooks of a `type` chat webhook at `url`. */
  const create = (type: string, url: string) =>
    api('POST', '/api/webhooks', {
      url,
      events: ['job.started'],
      secret: SECRET,
      destination: { type },
    });

  it('takes only the tools’ own hosts (or CHAT_EXTRA_HOSTS), and shows the address masked', async () => {
    const bad = await create('slack', 'https://example.com/services/T1/B1/x');
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].field).toBe('url');
    const wrongPath = await create('discord', 'https://discord.com/channels/1/2');
    expect(wrongPath.status).toBe(400);
    const address = 'https://hooks.slack.com/services/T0ABC/B0DEF/SeCrEtToKeNvalue9876';
    const slack = await create('slack', address);
    expect(slack.status).toBe(201);
    expect(slack.body.url).toBe('https://hooks.slack.com/****9876');
    const teams = await create(
      'teams',
      'https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?sig=xyz1',
    );
    expect(teams.status).toBe(201);
    const shown = await api('GET', `/api/webhooks/${slack.body.id}`);
    expect(shown.body.url).toBe('https://hooks.slack.com/****9876');
    const listed = await api('GET', '/api/webhooks');
    expect(JSON.stringify(listed.body)).not.toContain('SeCrEtToKeN');
    expect(t.logs.join('\n')).not.toContain('SeCrEtToKeN');
    const stored = await t.app
      .get(DataSource)
      .query(`SELECT url, url_encrypted FROM webhooks WHERE id = $1`, [slack.body.id]);
    expect(stored[0].url_encrypted).not.toContain('SeCrEtToKeN');
    for (const id of [slack.body.id, teams.body.id]) await api('DELETE', `/api/webhooks/${id}`);
  });

  it('sends each tool its built-in message for every kind, accepted, one a second per webhook', async () => {
    const hooks = await Promise.all(TOOLS.map(([type, path]) => chatWebhook(type, path)));
    const ids = hooks.map((h) => h.id);
    for (const kind of SUBSCRIPTION_EVENTS) await publish(ids, kind);
    for (const id of ids) expect((await api('POST', `/api/webhooks/${id}/test`)).status).toBe(202);
    await waitFor(() => hooks.every((h) => chat.to(h.path).length >= 7), {
      timeoutMs: 60_000,
      what: '7 messages to each tool',
    });
    for (const [i, hook] of hooks.entries()) {
      const got = chat.to(hook.path);
      expect(got.map((r) => [r.kind, r.refused])).toEqual(got.map(() => [TOOLS[i][0], null]));
      // The headers of a delivery go with a chat message too.
      expect(got[0].headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
      const events = got.map((r) => r.headers['x-service-event']);
      expect(new Set(events)).toEqual(new Set([...SUBSCRIPTION_EVENTS, 'webhook.test']));
      const text = got.map((r) => textOf(r.json)).join('\n');
      expect(text).toContain('Quarterly all');
      expect(text).toContain('Jill Chill');
      expect(text).toContain('/f1a2b3c4/download');
      expect(text).toMatch(/test/i);
      // Pacing: the default rate of one a second. The service spaces the starts of the attempts
      // a second apart; where the tool is, a gap also carries the difference between two
      // messages' times in transit, which a loaded machine stretches to a few hundred ms. Unpaced,
      // the seven would come within a few ms of each other.
      const times = got.map((r) => r.receivedAt).sort((a, b) => a - b);
      for (let j = 1; j < times.length; j++) {
        expect(times[j] - times[j - 1]).toBeGreaterThanOrEqual(500);
      }
      expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(
        (times.length - 1) * 1000 - 500,
      );
    }
  }, 90_000);

  it('escapes what would notify people, and cuts what is too long, so the tools take it', async () => {
    const hooks = await Promise.all(TOOLS.map(([type, path]) => chatWebhook(type, path)));
    const topic = `<!channel> @everyone <@U0123> <at>Boss</at> ${'long topic '.repeat(2000)}`;
    await publish(
      hooks.map((h) => h.id),
      'job.started',
      { topic },
    );
    const got = await waitFor(() => {
      const r = hooks.map((h) => chat.to(h.path)[0]);
      return r.every(Boolean) && r;
    });
    const [slack, discord, teams] = got.map((r) => r!);
    for (const r of got) expect(r!.refused).toBeNull();
    expect(textOf(slack.json)).not.toContain('<!channel>');
    expect(textOf(slack.json)).toContain('&lt;!channel&gt;');
    expect((discord.json as Json).allowed_mentions).toEqual({ parse: [] });
    expect(textOf(discord.json)).not.toMatch(/(?<!\\)@everyone/);
    expect(textOf(teams.json)).not.toMatch(/(?<!\\)<at>/);
    for (const r of got) expect(textOf(r!.json)).toContain('…');
  });

  it('waits out a 429: Slack’s Retry-After header, Discord’s retry_after in the body', async () => {
    const slack = await chatWebhook('slack', SLACK);
    const discord = await chatWebhook('discord', DISCORD);
    const slackPath = slack.path;
    const discordPath = discord.path;
    chat.answerFirst(slackPath, {
      status: 429,
      body: 'rate_limited',
      headers: { 'retry-after': '1' },
    });
    chat.answerFirst(discordPath, {
      status: 429,
      body: JSON.stringify({
        message: 'You are being rate limited.',
        retry_after: 1.5,
        global: false,
      }),
      headers: { 'content-type': 'application/json' },
    });
    const [s, d] = await publish([slack.id, discord.id], 'job.started');
    const sd = await waitForDeliveryStatus(t, token, slack.id, s, 'succeeded');
    const dd = await waitForDeliveryStatus(t, token, discord.id, d, 'succeeded');
    expect(sd.attempts.map((a: Json) => a.status_code)).toEqual([429, 200]);
    expect(dd.attempts.map((a: Json) => a.status_code)).toEqual([429, 204]);
    const gap = (p: string) => {
      const [a, b] = chat.to(p).map((r) => r.receivedAt);
      return b - a;
    };
    expect(gap(slackPath)).toBeGreaterThanOrEqual(900);
    // 1.5 s rounds up to 2: never sooner than the tool asked.
    expect(gap(discordPath)).toBeGreaterThanOrEqual(1900);
  }, 30_000);

  it('disables the webhook on Slack’s 404 no_service and on a 410, as for gone, recording what the tool said', async () => {
    const slack = await chatWebhook('slack', SLACK);
    const teams = await chatWebhook('teams', TEAMS);
    const slackPath = slack.path;
    const teamsPath = teams.path;
    const removed = 'Slack answered 404 no_service: the webhook was removed';
    // Twice: a second delivery is either ended by the disabling or, sent first, told the same.
    chat.answerFirst(slackPath, ...Array(2).fill({ status: 404, body: 'no_service' }));
    chat.answerFirst(teamsPath, { status: 410, body: 'gone' });
    const [s, d] = await publish([slack.id, teams.id], 'job.started');
    // A second event at once, while the first waits its turn (one message a second): the
    // disabling ends it, saying why in Slack's words rather than as a 410.
    const example = EVENT_EXAMPLES['job.completed'];
    const { deliveryIds } = await t.app.get(DispatcherService).publish({
      kind: 'job.completed',
      data: example.data as never,
      source: example.source as never,
    });
    const sd = await waitForDeliveryStatus(t, token, slack.id, s, 'failed');
    const dd = await waitForDeliveryStatus(t, token, teams.id, d, 'failed');
    for (const id of [slack.id, teams.id]) {
      const w = await waitFor(async () => {
        const res = await api('GET', `/api/webhooks/${id}`);
        return res.body.active === false && res.body;
      });
      expect(w.disabled_reason).toBe('gone');
    }
    const errors = [sd.last_error];
    for (const id of deliveryIds) {
      const res = await api('GET', `/api/webhooks/${slack.id}/deliveries/${id}`);
      if (res.status === 404) continue; // the other webhook's
      errors.push((await waitForDeliveryStatus(t, token, slack.id, id, 'failed')).last_error);
    }
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors).toContain(removed);
    for (const error of errors) expect([removed, `webhook disabled: ${removed}`]).toContain(error);
    expect(dd.last_error).toBe('Teams answered 410 Gone');
    expect(chat.to(slackPath).length).toBe(errors.filter((e) => e === removed).length);
  });

  it('sends a template’s output as given, and fails at once one the tool would refuse', async () => {
    const good = await chatWebhook('slack', SLACK, {
      template: '{"text": "Started: " & data.topic, "blocks": [{"type": "divider"}]}',
    });
    const bad = await chatWebhook('slack', SLACK, {
      template: '{"text": "x", "blocks": [1..51].{"type": "divider"}}',
    });
    const [g, b] = await publish([good.id, bad.id], 'job.started');
    const gd = await waitForDeliveryStatus(t, token, good.id, g, 'succeeded');
    expect(gd.payload).toEqual({
      text: 'Started: Quarterly all-hands',
      blocks: [{ type: 'divider' }],
    });
    const bd = await waitForDeliveryStatus(t, token, bad.id, b, 'failed');
    expect(bd.attempts).toHaveLength(1);
    expect(bd.last_error).toMatch(/^template: Slack would refuse the message: 51 blocks/);
    expect(chat.to(bad.path)).toHaveLength(0);
  });
});
