/**
 * The README's try-out, driven as a newcomer runs it: `npm run tryout`, `npm run receiver`, a
 * token for the try-out client, a webhook pointing at the receiver, `npm run send-event --
 * meeting.started`, and the receiver printing a verified delivery. Keeps the recipe true.
 */
import { randomBytes } from 'node:crypto';
import { TRYOUT } from '../scripts/tryout-settings';
import { SCOPES } from '../src/config/config.types';
import { request } from './support/http';
import { NpmScript, runNpmScript } from './support/npm-script';
import { freePort } from './support/spawn-app';
import { TEST_REDIS_URL, deleteRedisKeys } from './support/test-app';
import { TestDatabase, createTestDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';

describe('the README try-out', () => {
  let database: TestDatabase;
  const prefix = `mebtest:${randomBytes(4).toString('hex')}`;
  let service: NpmScript;
  let receiver: NpmScript;
  let baseUrl: string;
  let receiverUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    const [servicePort, receiverPort] = [await freePort(), await freePort()];
    baseUrl = `http://127.0.0.1:${servicePort}`;
    receiverUrl = `http://127.0.0.1:${receiverPort}/hook`;
    // Only where to listen and which database and Redis keys to use differ from the README.
    service = runNpmScript('tryout', [], {
      PORT: String(servicePort),
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    });
    receiver = runNpmScript('receiver', ['--port', String(receiverPort)]);
    await waitFor(() => service.output().includes('Try-out service on'), {
      timeoutMs: 90_000,
      what: 'the try-out service to announce itself',
    });
    await waitFor(() => receiver.output().includes('Receiver on'), {
      timeoutMs: 30_000,
      what: 'the receiver to listen',
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([service?.stop(), receiver?.stop()]);
    await deleteRedisKeys(prefix);
    await database?.drop();
  });

  it('announces the client, the Swagger UI and the next step', () => {
    expect(service.output()).toContain(`${TRYOUT.clientId} / ${TRYOUT.clientSecret}`);
    expect(service.output()).toContain('/docs');
    expect(receiver.output()).toContain(receiverUrl);
  });

  it('gives the try-out client every scope, queues:admin too', async () => {
    const token = await request(baseUrl, 'POST', '/oauth/token', {
      body: `grant_type=client_credentials&client_id=${TRYOUT.clientId}&client_secret=${TRYOUT.clientSecret}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status).toBe(200);
    expect(token.body.scope.split(' ').sort()).toEqual([...SCOPES].sort());
  });

  it('delivers a sent sample event to the receiver, which prints it verified', async () => {
    const basic = Buffer.from(`${TRYOUT.clientId}:${TRYOUT.clientSecret}`).toString('base64');
    const token = await request(baseUrl, 'POST', '/oauth/token', {
      body: 'grant_type=client_credentials',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    // A loopback URL: accepted only because the try-out allows private receivers.
    const webhook = await request(baseUrl, 'POST', '/api/webhooks', {
      token: token.body.access_token,
      body: { url: receiverUrl, events: ['job.started'], secret: TRYOUT.webhookSecret },
    });
    expect(webhook.status).toBe(201);

    const send = runNpmScript('send-event', ['meeting.started', '--url', baseUrl]);
    expect(await send.exit).toBe(0);
    expect(send.output()).toContain('meeting.started → 200 {"status":"accepted"}');

    const delivery = /verified delivery (\S+) \(attempt 1\): job\.started\n(\{[\s\S]*?\n\})/;
    const printed = await waitFor(() => delivery.exec(receiver.output()) ?? undefined, {
      timeoutMs: 30_000,
      what: 'the receiver to print a verified delivery',
    });
    const body = JSON.parse(printed[2]);
    expect(body).toMatchObject({
      event: 'job.started',
      data: { id: '85746065432' },
      source: { platform: 'zoom', event: 'meeting.started' },
    });
  });

  it('refuses, and prints as refused, a delivery signed with another secret', async () => {
    const res = await fetch(receiverUrl, {
      method: 'POST',
      headers: { 'x-service-signature': 'a'.repeat(64), 'x-service-delivery': 'forged-1' },
      body: '{"event":"job.started"}',
    });
    expect(res.status).toBe(401);
    await waitFor(() => receiver.output().includes('REFUSED POST /hook'), {
      what: 'the receiver to print the refusal',
    });
    expect(receiver.output()).not.toContain('verified delivery forged-1');
  });
});
