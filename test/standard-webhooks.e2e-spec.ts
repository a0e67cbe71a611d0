import { createHmac, randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import {
  meetingEnded,
  meetingStarted,
  meetingUuid,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCancelled,
  registrationCreated,
} from '../scripts/platform/zoom-events';
import { SUBSCRIPTION_EVENTS } from '../src/webhooks/subscription-events';
import { catalogChecker } from './support/event-schemas';
import { Json, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, scopesOfBut, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { sendZoomEvent } from './support/zoom-sender';

const GRACE_SECONDS = 3600;
// Long enough that a retry is signed at least one second after the attempt before it.
const BACKOFF_MS = 2500;

const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
const hexHmac = (secret: string, body: Buffer) =>
  createHmac('sha256', secret).update(body).digest('hex');
const header = (r: ReceivedRequest, name: string) => r.headers[name] as string | undefined;
const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));

/** The official library, keyed as docs/receiving.md tells a receiver holding `secret`. */
const verifierFor = (secret: string) =>
  secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });

/** Verifies `r` as a receiver would, with its clock `skewSeconds` ahead of now. */
function verifyAt(secret: string, r: ReceivedRequest, skewSeconds = 0): unknown {
  const headers = r.headers as Record<string, string>;
  if (skewSeconds === 0) return verifierFor(secret).verify(r.body, headers);
  const spy = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + skewSeconds * 1000);
  try {
    return verifierFor(secret).verify(r.body, headers);
  } finally {
    spy.mockRestore();
  }
}

describe('Standard Webhooks signatures, secret rotation and the event catalog (docs/receiving.md)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let token: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({
      env: {
        WEBHOOK_SECRET_GRACE_SECONDS: String(GRACE_SECONDS),
        DELIVERY_BACKOFF_MS: String(BACKOFF_MS),
        PUBLIC_BASE_URL: 'https://bridge.example.com',
        // A recording event without files publishes operation.failed at once.
        RECORDING_AUTOMATION_MAX_RETRIES: '0',
      },
    });
    token = await t.token('alpha');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });
  const arrivals = (path: string, count: number) =>
    waitFor(() => receiver.requests(path).length >= count && receiver.requests(path), {
      what: `${count} deliveries at ${path}`,
    });
  const sendTest = async (webhookId: string) => {
    const res = await api('POST', `/api/webhooks/${webhookId}/test`);
    expect(res.status).toBe(202);
    return res.body.id as string;
  };

  describe('GET /api/event-types', () => {
    it('lists the six kinds, webhook.test, zoom.* and the operational events, each with a description and a 2020-12 schema', async () => {
      const res = await api('GET', '/api/event-types');
      expect(res.status).toBe(200);
      expect(res.body.data.map((e: Json) => e.name)).toEqual([
        'job.started',
        'job.completed',
        'follower.gained',
        'follower.lost',
        'operation.complete',
        'operation.failed',
        'meeting.attendance',
        'webhook.test',
        'zoom.*',
        'bridge.webhook.disabled',
        'bridge.delivery.failed',
        'bridge.reconciliation.completed',
        'bridge.account.disconnected',
        'bridge.account.deauthorized',
      ]);
      for (const entry of res.body.data) {
        expect(Object.keys(entry).sort()).toEqual(['description', 'example', 'name', 'schema']);
        expect(entry.description).toEqual(expect.any(String));
        expect(entry.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      }
    });

    it('needs a token with webhooks:read', async () => {
      expect((await request(t.baseUrl, 'GET', '/api/event-types')).status).toBe(401);
      const without = await t.token('alpha', scopesOfBut('alpha', 'webhooks:read'));
      const res = await request(t.baseUrl, 'GET', '/api/event-types', { token: without });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('webhooks:read');
      const reader = await t.token('reader');
      expect((await request(t.baseUrl, 'GET', '/api/event-types', { token: reader })).status).toBe(
        200,
      );
    });

    it('is the schema Swagger shows for each notification callback', async () => {
      const docs = (await request(t.baseUrl, 'GET', '/docs-json')).body;
      const catalog = (await api('GET', '/api/event-types')).body.data as Json[];
      const callbacks = docs.paths['/zoom/events'].post.callbacks;
      for (const kind of SUBSCRIPTION_EVENTS) {
        const ref =
          callbacks[kind]['{subscribed webhook url}'].post.requestBody.content['application/json']
            .schema.$ref;
        const documented = docs.components.schemas[ref.replace('#/components/schemas/', '')];
        const served = catalog.find((e) => e.name === kind).schema;
        expect(documented.description).toBe(served.description);
        expect(documented.required).toEqual(served.required);
        expect(Object.keys(documented.properties)).toEqual(Object.keys(served.properties));
        expect(documented.properties.event).toEqual({ enum: [kind] });
        expect(documented.properties.data.required).toEqual(served.properties.data.required);
        expect(Object.keys(documented.properties.data.properties)).toEqual(
          Object.keys(served.properties.data.properties),
        );
        // Swagger's example of the kind is itself a valid body of it.
        expect(catalogChecker(catalog)(JSON.stringify(documented.example))).toEqual([]);
      }
    });
  });

  describe('signatures', () => {
    it('signs the test delivery so the official library verifies it; a tampered body or an old timestamp fails', async () => {
      const { url, path } = receiver.route({}, 'test-delivery');
      const webhook = await createWebhook(t, { url, secret: whsec() });
      const deliveryId = await sendTest(webhook.id);
      const [r] = await arrivals(path, 1);

      expect(header(r, 'webhook-id')).toBe(deliveryId);
      expect(header(r, 'webhook-id')).toBe(header(r, 'x-service-delivery'));
      expect(Math.abs(Number(header(r, 'webhook-timestamp')) - r.receivedAt / 1000)).toBeLessThan(
        5,
      );
      expect(header(r, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verifyAt(webhook.secret, r)).toEqual(bodyOf(r));
      // The seed's header is unchanged: hex HMAC over the body, keyed with the whole secret.
      expect(header(r, 'x-service-signature')).toBe(hexHmac(webhook.secret, r.body));
      expect(header(r, 'x-service-signature-previous')).toBeUndefined();

      const tampered = { ...r, body: Buffer.from(r.body.toString().replace('Test', 'Tost')) };
      expect(tampered.body.equals(r.body)).toBe(false);
      expect(() => verifyAt(webhook.secret, tampered)).toThrow('No matching signature found');
      expect(() => verifyAt(whsec(), r)).toThrow(WebhookVerificationError);
      // A capture replayed six minutes later is refused on its timestamp.
      expect(() => verifyAt(webhook.secret, r, 6 * 60)).toThrow('Message timestamp too old');
    });

    it('signs a mapped platform event; a plain secret keys it with its UTF-8 bytes', async () => {
      const { url, path } = receiver.route({}, 'mapped');
      const webhook = await createWebhook(t, {
        url,
        events: ['job.started'],
        secret: 'plain-sécret-☕-0123456789',
      });
      const uuid = meetingUuid();
      expect((await sendZoomEvent(t.baseUrl, meetingStarted(uuid))).status).toBe(200);
      const [r] = await waitFor(
        () => {
          const mine = receiver.requests(path).filter((q) => bodyOf(q).data.uuid === uuid);
          return mine.length > 0 && mine;
        },
        { what: 'the job.started delivery' },
      );
      expect(bodyOf(r)).toMatchObject({ event: 'job.started', data: { uuid } });
      expect(verifyAt(webhook.secret, r)).toEqual(bodyOf(r));
      expect(header(r, 'x-service-signature')).toBe(hexHmac(webhook.secret, r.body));
      expect(() => verifyAt(webhook.secret, r, -6 * 60)).toThrow('Message timestamp too new');
    });

    it('signs each retry anew: same id and body bytes, a later timestamp, each verifying', async () => {
      const { url, path } = receiver.route({ statuses: [503, 200] }, 'retry');
      const webhook = await createWebhook(t, { url, secret: whsec() });
      const deliveryId = await sendTest(webhook.id);
      const [first, second] = await arrivals(path, 2);

      expect([header(first, 'x-service-attempt'), header(second, 'x-service-attempt')]).toEqual([
        '1',
        '2',
      ]);
      expect(header(second, 'webhook-id')).toBe(deliveryId);
      expect(header(first, 'webhook-id')).toBe(deliveryId);
      expect(second.body.equals(first.body)).toBe(true);
      expect(Number(header(second, 'webhook-timestamp'))).toBeGreaterThan(
        Number(header(first, 'webhook-timestamp')),
      );
      expect(header(second, 'webhook-signature')).not.toBe(header(first, 'webhook-signature'));
      expect(verifyAt(webhook.secret, first)).toEqual(bodyOf(first));
      expect(verifyAt(webhook.secret, second)).toEqual(bodyOf(second));
      // Swapping the first attempt's timestamp into the second does not verify.
      const swapped = {
        ...second,
        headers: { ...second.headers, 'webhook-timestamp': header(first, 'webhook-timestamp') },
      };
      expect(() => verifyAt(webhook.secret, swapped)).toThrow('No matching signature found');
    });

    it('signs operation.complete of the recording automation', async () => {
      const { url, path } = receiver.route({}, 'recording');
      const webhook = await createWebhook(t, {
        url,
        events: ['operation.complete'],
        secret: whsec(),
      });
      const uuid = meetingUuid();
      expect((await sendZoomEvent(t.baseUrl, recordingCompleted(uuid))).status).toBe(200);
      const [r] = await arrivals(path, 1);
      expect(bodyOf(r)).toMatchObject({ event: 'operation.complete', data: { uuid } });
      expect(verifyAt(webhook.secret, r)).toEqual(bodyOf(r));
    });
  });

  describe('every kind', () => {
    it('signs each of the six kinds so that the official library verifies it', async () => {
      const { url, path } = receiver.route({}, 'every-kind');
      const webhook = await createWebhook(t, {
        url,
        events: [...SUBSCRIPTION_EVENTS],
        secret: 'every-kind-secret-0123456789',
      });
      const uuid = meetingUuid();
      // A second meeting for the failed recording: one recording event per meeting is kept.
      const failedUuid = meetingUuid();
      const mine = () =>
        receiver.requests(path).filter((r) => [uuid, failedUuid].includes(bodyOf(r).data?.uuid));
      const kindsSoFar = () => mine().map((r) => bodyOf(r).event as string);
      const send = async (event: object) =>
        expect((await sendZoomEvent(t.baseUrl, event)).status).toBe(200);

      const noFiles = recordingCompleted(failedUuid);
      delete (noFiles.payload.object as { recording_files?: unknown }).recording_files;
      for (const event of [
        meetingStarted(uuid),
        meetingEnded(uuid),
        participantJoined(uuid),
        participantLeft(uuid),
        registrationCreated(uuid),
        noFiles,
      ]) {
        await send(event);
      }
      // Cancelled after the registration's follower.gained has gone out: a lost follower is
      // one that had been gained.
      await waitFor(() => kindsSoFar().filter((k) => k === 'follower.gained').length === 2, {
        what: 'both follower.gained deliveries',
      });
      await send(registrationCancelled(uuid));
      await send(recordingCompleted(uuid));

      const expected = [
        'follower.gained',
        'follower.gained',
        'follower.lost',
        'follower.lost',
        'job.completed',
        'job.started',
        'operation.complete',
        'operation.failed',
      ];
      await waitFor(() => kindsSoFar().length >= expected.length, {
        what: `${expected.length} deliveries, got ${kindsSoFar().join(', ')}`,
      });
      expect(kindsSoFar().sort()).toEqual(expected);
      for (const r of mine()) {
        expect(verifyAt(webhook.secret, r)).toEqual(bodyOf(r));
        expect(header(r, 'webhook-id')).toBe(header(r, 'x-service-delivery'));
      }
      expect(new Set(mine().map((r) => header(r, 'webhook-id'))).size).toBe(expected.length);
    });
  });

  describe('secret rotation', () => {
    it('keeps the replaced secret signing through the grace; a second PATCH keeps only the one it replaced; expiry ends it', async () => {
      const { url, path } = receiver.route({}, 'rotation');
      const [a, b, c] = [whsec(), 'second-secret-plain-0123456789', whsec()];
      const webhook = await createWebhook(t, { url, secret: a });
      const created = await api('GET', `/api/webhooks/${webhook.id}`);
      expect(created.body.previous_secret_expires_at).toBeNull();

      // PATCH a → b: both sign, new first.
      const before = Date.now();
      const patched = await api('PATCH', `/api/webhooks/${webhook.id}`, { secret: b });
      expect(patched.status).toBe(200);
      const expiresAt = Date.parse(patched.body.previous_secret_expires_at);
      expect(expiresAt).toBeGreaterThanOrEqual(before + GRACE_SECONDS * 1000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + GRACE_SECONDS * 1000 + 1000);
      expect(patched.body.secret_hint).toBe(b.slice(-4));
      expect((await api('GET', `/api/webhooks/${webhook.id}`)).body).toMatchObject({
        previous_secret_expires_at: patched.body.previous_secret_expires_at,
      });

      await sendTest(webhook.id);
      const [r1] = await arrivals(path, 1);
      const signatures = header(r1, 'webhook-signature')!.split(' ');
      expect(signatures).toHaveLength(2);
      expect(verifyAt(b, r1)).toEqual(bodyOf(r1));
      expect(verifyAt(a, r1)).toEqual(bodyOf(r1));
      expect(signatures[0]).toBe(
        verifierFor(b).sign(
          header(r1, 'webhook-id')!,
          new Date(Number(header(r1, 'webhook-timestamp')) * 1000),
          r1.body.toString(),
        ),
      );
      expect(header(r1, 'x-service-signature')).toBe(hexHmac(b, r1.body));
      expect(header(r1, 'x-service-signature-previous')).toBe(hexHmac(a, r1.body));

      // PATCH b → c within the grace: b is the previous one now, a signs no more.
      const again = await api('PATCH', `/api/webhooks/${webhook.id}`, { secret: c });
      expect(Date.parse(again.body.previous_secret_expires_at)).toBeGreaterThanOrEqual(expiresAt);
      await sendTest(webhook.id);
      const r2 = (await arrivals(path, 2))[1];
      expect(header(r2, 'webhook-signature')!.split(' ')).toHaveLength(2);
      expect(verifyAt(c, r2)).toEqual(bodyOf(r2));
      expect(verifyAt(b, r2)).toEqual(bodyOf(r2));
      expect(() => verifyAt(a, r2)).toThrow('No matching signature found');
      expect(header(r2, 'x-service-signature')).toBe(hexHmac(c, r2.body));
      expect(header(r2, 'x-service-signature-previous')).toBe(hexHmac(b, r2.body));

      // A PATCH that leaves the secret alone leaves the rotation alone.
      const other = await api('PATCH', `/api/webhooks/${webhook.id}`, { active: true });
      expect(other.body.previous_secret_expires_at).toBe(again.body.previous_secret_expires_at);

      // The grace runs out (moved into the past here rather than waited for).
      await t.app
        .get(DataSource)
        .query(
          `UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`,
          [webhook.id],
        );
      expect(
        (await api('GET', `/api/webhooks/${webhook.id}`)).body.previous_secret_expires_at,
      ).toBeNull();
      await sendTest(webhook.id);
      const r3 = (await arrivals(path, 3))[2];
      expect(header(r3, 'webhook-signature')!.split(' ')).toHaveLength(1);
      expect(verifyAt(c, r3)).toEqual(bodyOf(r3));
      expect(() => verifyAt(b, r3)).toThrow('No matching signature found');
      expect(header(r3, 'x-service-signature-previous')).toBeUndefined();

      // No secret is ever returned or logged.
      const listed = await api('GET', '/api/webhooks?limit=100');
      const shown = JSON.stringify([patched.body, again.body, other.body, listed.body]);
      const logs = t.logs.join('\n');
      for (const secret of [a, b, c]) {
        expect(shown).not.toContain(secret);
        expect(logs).not.toContain(secret);
      }
    });

    it('a retry during the grace carries both signatures', async () => {
      const { url, path } = receiver.route({ statuses: [500, 204] }, 'rotation-retry');
      const [a, b] = [whsec(), whsec()];
      const webhook = await createWebhook(t, { url, secret: a });
      await api('PATCH', `/api/webhooks/${webhook.id}`, { secret: b });
      await sendTest(webhook.id);
      for (const r of await arrivals(path, 2)) {
        expect(verifyAt(a, r)).toEqual(bodyOf(r));
        expect(verifyAt(b, r)).toEqual(bodyOf(r));
      }
    });
  });

  // Last: every body delivered above, against its kind's schema as the API serves it.
  it('every body delivered in this file validates against its kind schema from GET /api/event-types', async () => {
    const catalog = (await api('GET', '/api/event-types')).body.data;
    const check = catalogChecker(catalog);
    const kinds = new Set(receiver.received.map((r) => bodyOf(r).event));
    expect([...kinds].sort()).toEqual([...SUBSCRIPTION_EVENTS, 'webhook.test'].sort());
    expect(receiver.received.length).toBeGreaterThanOrEqual(10);
    for (const r of receiver.received) expect(check(r.body)).toEqual([]);
  });
});
