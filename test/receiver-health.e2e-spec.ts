import { DataSource } from 'typeorm';
import { RetentionService } from '../src/retention/retention.service';
import { getDelivery, waitForDeliveryStatus } from './support/deliveries';
import { deliveryFixture } from './support/delivery-fixture';
import { Json } from './support/http';
import { waitFor } from './support/wait-for';
import { createWebhook, setWebhookActive } from './support/webhooks';

/** docs/api.md#receiver-health: 410 and failing disable, Retry-After, WEBHOOKS_PER_CLIENT, retention. */
describe('receiver health, limits and retention', () => {
  const fixture = deliveryFixture({
    env: {
      DELIVERY_MAX_RETRIES: '1',
      WEBHOOK_DISABLE_AFTER_FAILURES: '3',
      WEBHOOKS_PER_CLIENT: '4',
    },
  });
  const publish = async () =>
    (await fixture.dispatcher.publish({ kind: 'job.started', data: {} })).deliveryIds[0];

  it('disables on 410 at once, ends its pending deliveries failed, and PATCH active: true enables', async () => {
    const { t, receiver, token, api, metric } = fixture;
    // The first answer asks for an hour's wait, so that delivery is pending when 410 comes.
    const route = receiver.route({ statuses: [503, 410], headers: { 'retry-after': '3600' } });
    const webhook = await createWebhook(t, { url: route.url });
    const before = await metric('webhooks_disabled_total{reason="gone"}');

    const waiting = await publish();
    const pending = await waitFor(async () => {
      const d = await getDelivery(t, token, webhook.id, waiting);
      return d.attempt_count === 1 && d;
    });
    // Retry-After wins over the 50 ms backoff: the retry is due in an hour.
    const dueInMs = Date.parse(pending.next_attempt_at) - Date.now();
    expect(dueInMs).toBeGreaterThan(3_500_000);
    expect(dueInMs).toBeLessThanOrEqual(3_600_000);

    const gone = await publish();
    await waitForDeliveryStatus(t, token, webhook.id, gone, 'failed');
    const ended = await waitForDeliveryStatus(t, token, webhook.id, waiting, 'failed');
    expect(ended.last_error).toBe('webhook disabled: the receiver answered 410 Gone');
    const disabled = (await api('GET', `/api/webhooks/${webhook.id}`)).body;
    expect(disabled).toMatchObject({
      active: false,
      disabled_reason: 'gone',
      disabled_at: expect.any(String),
    });
    expect(await metric('webhooks_disabled_total{reason="gone"}')).toBe(before + 1);
    expect(t.logs.some((l) => l.includes(`webhook ${webhook.id} disabled (gone)`))).toBe(true);
    expect(receiver.requests(route.path)).toHaveLength(2);

    const enabled = await api('PATCH', `/api/webhooks/${webhook.id}`, { active: true });
    expect(enabled.body).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
  });

  it('waits the Retry-After of a 429 before the retry', async () => {
    const { t, receiver, token } = fixture;
    const route = receiver.route({ statuses: [429, 200], headers: { 'retry-after': '1' } });
    const webhook = await createWebhook(t, { url: route.url });
    const id = await publish();
    await waitForDeliveryStatus(t, token, webhook.id, id, 'succeeded');
    const [first, second] = receiver.requests(route.path);
    // The backoff alone would be about 50 ms.
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(950);
  });

  it('disables after WEBHOOK_DISABLE_AFTER_FAILURES failed deliveries in a row, tests aside', async () => {
    const { t, receiver, token, api, metric } = fixture;
    const route = receiver.route({ statuses: [500] });
    const webhook = await createWebhook(t, { url: route.url });
    const before = await metric('webhooks_disabled_total{reason="failing"}');
    const failOne = async () =>
      waitForDeliveryStatus(t, token, webhook.id, await publish(), 'failed');

    await failOne();
    await failOne();
    const test = await api('POST', `/api/webhooks/${webhook.id}/test`);
    await waitForDeliveryStatus(t, token, webhook.id, test.body.id, 'failed');
    expect((await api('GET', `/api/webhooks/${webhook.id}`)).body.active).toBe(true);

    await failOne();
    // The rule applies just after the delivery's final attempt is recorded.
    await waitFor(async () => !(await api('GET', `/api/webhooks/${webhook.id}`)).body.active);
    expect((await api('GET', `/api/webhooks/${webhook.id}`)).body).toMatchObject({
      active: false,
      disabled_reason: 'failing',
    });
    expect(await metric('webhooks_disabled_total{reason="failing"}')).toBe(before + 1);

    // Enabled again, the count starts afresh: one more failure does not disable it.
    await setWebhookActive(t, webhook.id, true);
    await failOne();
    expect((await api('GET', `/api/webhooks/${webhook.id}`)).body).toMatchObject({
      active: true,
      disabled_reason: null,
    });
  });

  it('refuses a webhook beyond WEBHOOKS_PER_CLIENT with 409, per client', async () => {
    const { t, receiver, api } = fixture;
    const beta = await t.token('beta');
    const body = { url: receiver.route().url, events: ['job.started'], secret: 'x'.repeat(16) };
    for (let i = 0; i < 4; i++) {
      expect((await api('POST', '/api/webhooks', body, beta)).status).toBe(201);
    }
    const refused = await api('POST', '/api/webhooks', body, beta);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('WEBHOOKS_PER_CLIENT');
    const list = await api('GET', '/api/webhooks', undefined, beta);
    expect(list.body.data).toHaveLength(4);
  });

  it('retention deletes what is older than RETENTION_DAYS and keeps an event with a pending delivery', async () => {
    const { t, receiver } = fixture;
    const db = t.app.get(DataSource);
    const webhook = await createWebhook(t, { url: receiver.route().url });
    await setWebhookActive(t, webhook.id, false);
    const old = `now() - interval '40 days'`;
    const insertEvent = async (age: string) =>
      (
        (await db.query(
          `INSERT INTO events (kind, data, created_at) VALUES ('job.started', '{}', ${age}) RETURNING id`,
        )) as { id: string }[]
      )[0].id;
    const insertDelivery = async (eventId: string, status: string, age: string) =>
      (
        (await db.query(
          `INSERT INTO deliveries (webhook_id, event_id, event, body, status, attempt_count,
             created_at, completed_at)
           VALUES ($1, $2, 'job.started', '{}', $3, 1, ${age},
             CASE WHEN $3 = 'pending' THEN NULL ELSE ${age} END) RETURNING id`,
          [webhook.id, eventId, status],
        )) as { id: string }[]
      )[0].id;
    const oldEvent = await insertEvent(old);
    const oldDelivery = await insertDelivery(oldEvent, 'failed', old);
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms)
       VALUES ($1, 1, ${old}, 5)`,
      [oldDelivery],
    );
    const keptEvent = await insertEvent(old);
    const pendingDelivery = await insertDelivery(keptEvent, 'pending', old);
    const recentEvent = await insertEvent('now()');
    const recentDelivery = await insertDelivery(recentEvent, 'succeeded', 'now()');
    await db.query(
      `INSERT INTO inbound_events (event, identity_key, payload, received_at)
       VALUES ('meeting.started', 'retention-old', '{}', ${old}),
              ('meeting.started', 'retention-new', '{}', now())`,
    );

    // The run at start may hold the lock for a moment.
    await waitFor(async () => (await t.app.get(RetentionService).run()) !== null);

    const ids = async (table: string) =>
      ((await db.query(`SELECT id FROM ${table}`)) as { id: string }[]).map((r) => r.id);
    expect(await ids('events')).toEqual(expect.arrayContaining([keptEvent, recentEvent]));
    expect(await ids('events')).not.toContain(oldEvent);
    const deliveries = await ids('deliveries');
    expect(deliveries).toEqual(expect.arrayContaining([pendingDelivery, recentDelivery]));
    expect(deliveries).not.toContain(oldDelivery);
    expect(
      await db.query(`SELECT 1 FROM delivery_attempts WHERE delivery_id = $1`, [oldDelivery]),
    ).toEqual([]);
    const inbound = (await db.query(`SELECT identity_key FROM inbound_events`)) as Json[];
    expect(inbound.map((r) => r.identity_key)).toContain('retention-new');
    expect(inbound.map((r) => r.identity_key)).not.toContain('retention-old');
    // Whole partitions went (docs/operations.md#partitions): no day wholly older than
    // RETENTION_DAYS is left, and the first partition (from MINVALUE) took their range.
    for (const table of ['events', 'deliveries', 'delivery_attempts', 'inbound_events']) {
      const expired = (await db.query(
        `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = $1::regclass AND pg_get_expr(c.relpartbound, c.oid) NOT LIKE '%MINVALUE%'
           AND (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz
               <= now() - interval '30 days'`,
        [table],
      )) as Json[];
      expect({ table, expired }).toEqual({ table, expired: [] });
    }
  });
});
