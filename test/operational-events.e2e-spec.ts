import { randomUUID } from 'node:crypto';
import { meetingStarted } from '../scripts/platform/zoom-events';
import { signatureVerifies } from './support/deliveries';
import { Json, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { TestWebhook, createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

const OPERATIONAL = ['bridge.webhook.disabled', 'bridge.delivery.failed'];
const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));

describe('operational events (docs/operations.md)', () => {
  let t: TestApp;
  let receiver: Receiver;
  /** Alpha's failing receiver, also subscribed to the events about itself (never sent them). */
  let failing: TestWebhook & { path: string };
  /** Alpha's healthy subscriber to both operational events. */
  let watcher: TestWebhook & { path: string };
  /** Alpha's subscriber whose own receiver fails: its failures must report nothing. */
  let brokenWatcher: TestWebhook & { path: string };
  /** Beta's subscriber: events about alpha's webhooks never reach another client. */
  let otherClient: TestWebhook & { path: string };

  const hook = async (
    name: string,
    statuses: number[],
    events: string[],
    client: 'alpha' | 'beta' = 'alpha',
  ) => {
    const route = receiver.route({ statuses }, name);
    return { ...(await createWebhook(t, { url: route.url, events, client })), path: route.path };
  };

  beforeAll(async () => {
    t = await startTestApp({
      env: { DELIVERY_MAX_RETRIES: '1', WEBHOOK_DISABLE_AFTER_FAILURES: '2' },
    });
    receiver = await startReceiver();
    failing = await hook('failing', [500], ['job.started', 'bridge.delivery.failed']);
    watcher = await hook('watcher', [200], OPERATIONAL);
    brokenWatcher = await hook('broken-watcher', [503], ['bridge.delivery.failed']);
    otherClient = await hook('other-client', [200], OPERATIONAL, 'beta');
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('accepts the operational events in a subscription, and lists them in the catalog', async () => {
    const res = await request(t.baseUrl, 'GET', `/api/webhooks/${watcher.id}`, {
      token: await t.token(),
    });
    expect(res.body.events).toEqual(OPERATIONAL);
    const catalog = await request(t.baseUrl, 'GET', '/api/event-types', { token: await t.token() });
    const names = (catalog.body.data as Json[]).map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(OPERATIONAL));
  });

  it('sends bridge.delivery.failed, then bridge.webhook.disabled, to the owner’s other subscribed webhooks only', async () => {
    await sendZoomEvent(t.baseUrl, meetingStarted(`ops-1-${randomUUID()}`));
    const failed = await waitFor(
      () =>
        receiver.requests(watcher.path).find((r) => bodyOf(r).event === 'bridge.delivery.failed'),
      { what: 'bridge.delivery.failed at the watcher' },
    );
    const [firstDelivery] = await queryDatabase<{ id: string; event_id: string }>(
      t.database.url,
      `SELECT id, event_id FROM deliveries WHERE webhook_id = $1 AND event = 'job.started'`,
      [failing.id],
    );
    expect(bodyOf(failed)).toEqual({
      id: expect.any(String),
      event: 'bridge.delivery.failed',
      created_at: expect.stringMatching(/Z$/),
      data: {
        delivery_id: firstDelivery.id,
        webhook_id: failing.id,
        event: 'job.started',
        event_id: firstDelivery.event_id,
        attempt_count: 2,
        last_status_code: 500,
        last_error: 'HTTP 500',
      },
      source: null,
    });
    // Signed and headed like every notification.
    expect(signatureVerifies(watcher.secret, failed)).toBe(true);
    expect(failed.headers['x-service-event']).toBe('bridge.delivery.failed');
    expect(failed.headers['webhook-id']).toBe(failed.headers['x-service-delivery']);

    // A second failure in a row disables the failing webhook (WEBHOOK_DISABLE_AFTER_FAILURES=2).
    await sendZoomEvent(t.baseUrl, meetingStarted(`ops-2-${randomUUID()}`));
    const disabled = await waitFor(
      () =>
        receiver.requests(watcher.path).find((r) => bodyOf(r).event === 'bridge.webhook.disabled'),
      { what: 'bridge.webhook.disabled at the watcher' },
    );
    const [row] = await queryDatabase<{ disabled_at: Date }>(
      t.database.url,
      `SELECT disabled_at FROM webhooks WHERE id = $1`,
      [failing.id],
    );
    expect(bodyOf(disabled).data).toEqual({
      webhook_id: failing.id,
      url: failing.url,
      reason: 'failing',
      disabled_at: row.disabled_at.toISOString(),
    });
    await waitFor(
      () =>
        receiver.requests(watcher.path).filter((r) => bodyOf(r).event === 'bridge.delivery.failed')
          .length === 2,
      { what: 'the second bridge.delivery.failed' },
    );

    // Never the webhook concerned, never another client's webhook.
    expect(receiver.requests(failing.path).map((r) => bodyOf(r).event)).toEqual([
      'job.started',
      'job.started',
      'job.started',
      'job.started',
    ]);
    expect(receiver.requests(otherClient.path)).toEqual([]);
    // The operational events are the owner's events in the lookup too.
    const listed = await request(t.baseUrl, 'GET', '/api/events?event=bridge.webhook.disabled', {
      token: await t.token(),
    });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: bodyOf(disabled).id })]);
  });

  it('publishes nothing further when a delivery of a bridge.* event fails (no loop)', async () => {
    // The broken watcher got both bridge.delivery.failed events and failed each for good, which
    // also disabled it: neither may be reported.
    await waitFor(
      async () => {
        const rows = await queryDatabase<{ status: string }>(
          t.database.url,
          `SELECT status FROM deliveries WHERE webhook_id = $1`,
          [brokenWatcher.id],
        );
        return rows.length === 2 && rows.every((r) => r.status === 'failed');
      },
      { what: "the broken watcher's deliveries to fail" },
    );
    const [{ active }] = await queryDatabase<{ active: boolean }>(
      t.database.url,
      `SELECT active FROM webhooks WHERE id = $1`,
      [brokenWatcher.id],
    );
    expect(active).toBe(false);
    const about = await queryDatabase<{ kind: string; about: string }>(
      t.database.url,
      `SELECT kind, data->>'webhook_id' AS about FROM events WHERE kind LIKE 'bridge.%'`,
    );
    expect(about.filter((e) => e.about === brokenWatcher.id)).toEqual([]);
    expect(about.map((e) => e.kind).sort()).toEqual([
      'bridge.delivery.failed',
      'bridge.delivery.failed',
      'bridge.webhook.disabled',
    ]);
    expect(
      receiver.requests(watcher.path).every((r) => bodyOf(r).data.webhook_id === failing.id),
    ).toBe(true);
  });
});
