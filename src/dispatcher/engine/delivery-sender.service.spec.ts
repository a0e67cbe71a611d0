import { once } from 'node:events';
import { Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import dnsPromises from 'node:dns/promises';
import { waitFor } from '../../../test/support/wait-for';
import { AppConfig } from '../../config/config.types';
import { SecretCipherService } from '../../webhooks/secret-cipher.service';
import { DestinationSenders } from '../../destinations/destination-senders';
import {
  DeliverySenderService,
  RESPONSE_EXCERPT_BYTES,
  excerptText,
} from './delivery-sender.service';

describe('excerptText', () => {
  it('keeps the first 1 KiB', () => {
    expect(excerptText(Buffer.alloc(5000, 'a'))).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(excerptText(Buffer.from('short'))).toBe('short');
  });

  it('replaces NUL, which PostgreSQL text cannot store', () => {
    expect(excerptText(Buffer.from([0x61, 0x00, 0x62]))).toBe('a\uFFFDb');
  });

  it('never yields invalid UTF-8 when the cut splits a character', () => {
    const text = excerptText(Buffer.from('x'.repeat(RESPONSE_EXCERPT_BYTES - 1) + 'é'));
    expect(text.endsWith('\uFFFD')).toBe(true);
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
  });
});

let destinations: DestinationSenders;
async function senderFor(
  config: AppConfig,
  cipher: SecretCipherService,
): Promise<DeliverySenderService> {
  destinations = new DestinationSenders({ ...config, destinationBrokers: [] });
  await destinations.onModuleInit();
  return new DeliverySenderService(config, cipher, destinations);
}

describe('DeliverySenderService', () => {
  const TIMEOUT_MS = 200;
  const config = {
    webhookAllowPrivateUrls: false,
    secretsEncryptionKey: Buffer.alloc(32, 7),
    delivery: { timeoutMs: TIMEOUT_MS, concurrency: 1 },
  } as unknown as AppConfig;
  let sender: DeliverySenderService;

  beforeEach(async () => {
    sender = await senderFor(config, new SecretCipherService(config));
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await destinations.onApplicationShutdown();
  });

  it('bounds the whole attempt by DELIVERY_TIMEOUT_MS, the DNS lookup of the URL check included', async () => {
    // A resolver that does not answer in time; the URL policy would wait for it up to 3 s.
    let answer = (): void => undefined;
    jest.spyOn(dnsPromises, 'lookup').mockImplementation(
      () =>
        new Promise((resolve) => {
          answer = () => resolve([] as never);
        }),
    );
    const result = await sender.send({
      deliveryId: '6f1c1c3e-0000-4000-8000-000000000001',
      event: 'job.started',
      ownerClientId: 'alpha',
      url: 'http://hooks.example.com/notify',
      body: '{}',
      secretEncrypted: new SecretCipherService(config).encrypt('secret'),
      previousSecretEncrypted: null,
      attempt: 1,
    });
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      error: `timed out after ${TIMEOUT_MS} ms checking the URL`,
      responseBody: null,
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(result.durationMs).toBeLessThan(1000);
    answer();
  });
});

describe('DeliverySenderService against a receiver', () => {
  const TIMEOUT_MS = 300;
  const config = {
    webhookAllowPrivateUrls: true,
    secretsEncryptionKey: Buffer.alloc(32, 7),
    delivery: { timeoutMs: TIMEOUT_MS, concurrency: 2 },
  } as unknown as AppConfig;
  const cipher = new SecretCipherService(config);
  let sender: DeliverySenderService;
  let server: Server;
  let url: string;
  /** How the receiver answers, once it has read the request. */
  let answer: (res: ServerResponse) => void;
  /** The request line's target of each request, and whether its connection closed unanswered. */
  let seen: { url: string | undefined; closedUnanswered: boolean }[];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const request = { url: req.url, closedUnanswered: false };
      seen.push(request);
      res.on('close', () => (request.closedUnanswered = !res.writableEnded));
      req.resume();
      req.on('end', () => answer(res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  beforeEach(async () => {
    sender = await senderFor(config, cipher);
    seen = [];
  });
  afterEach(() => destinations.onApplicationShutdown());
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (to = url) =>
    sender.send({
      deliveryId: '6f1c1c3e-0000-4000-8000-000000000002',
      event: 'job.started',
      ownerClientId: 'alpha',
      url: to,
      body: '{}',
      secretEncrypted: cipher.encrypt('secret'),
      previousSecretEncrypted: null,
      attempt: 1,
    });

  it('counts a 2xx whose body passes 64 KiB and never ends as a timed-out attempt', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write(Buffer.alloc(70 * 1024, 'a'));
      // ...and then nothing more, the connection held open.
    };
    const result = await send();
    expect(result).toMatchObject({
      ok: false,
      statusCode: 200,
      error: `timed out after ${TIMEOUT_MS} ms reading the response body`,
      responseBody: 'a'.repeat(RESPONSE_EXCERPT_BYTES),
    });
  });

  it('counts a 2xx with a large body that ends in time as a success', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(Buffer.alloc(512 * 1024, 'b'));
    };
    expect(await send()).toMatchObject({ ok: true, statusCode: 200, error: null });
  });

  it('counts a 2xx whose body is cut off by a reset as a failure, keeping what arrived', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('partial', () => res.socket?.destroy());
    };
    const result = await send();
    expect(result).toMatchObject({ ok: false, statusCode: 200, responseBody: 'partial' });
    expect(result.error).toMatch(/^HTTP 200, then the response body failed: /);
  });

  it('gives up on a receiver that never answers at the deadline, and drops its connection', async () => {
    answer = () => undefined;
    const result = await send();
    expect(result).toMatchObject({
      ok: false,
      statusCode: null,
      error: `timed out after ${TIMEOUT_MS} ms`,
      responseBody: null,
    });
    await waitFor(() => seen[0]?.closedUnanswered, { what: 'the connection dropped' });
  });

  it('sends the path and query as registered, and keeps Retry-After and the answer of a 503', async () => {
    answer = (res) => {
      res.writeHead(503, { 'retry-after': '7', 'content-type': 'text/plain' });
      res.end('busy');
    };
    expect(await send(`${url}/deep?tenant=a%20b&x=1`)).toMatchObject({
      ok: false,
      statusCode: 503,
      error: 'HTTP 503',
      responseBody: 'busy',
      retryAfter: '7',
    });
    expect(seen.map((r) => r.url)).toEqual(['/hook/deep?tenant=a%20b&x=1']);
  });

  it('does not follow a redirect', async () => {
    answer = (res) => {
      res.writeHead(302, { location: '/elsewhere' });
      res.end();
    };
    expect(await send()).toMatchObject({
      ok: false,
      statusCode: 302,
      error: 'HTTP 302: redirects are not followed',
    });
    expect(seen).toHaveLength(1);
  });

  it('records an empty answer as an empty excerpt', async () => {
    answer = (res) => {
      res.writeHead(204);
      res.end();
    };
    expect(await send()).toMatchObject({ ok: true, statusCode: 204, responseBody: '' });
  });
});

describe('DeliverySenderService: custom headers and broker destinations', () => {
  const config = {
    webhookAllowPrivateUrls: true,
    secretsEncryptionKey: Buffer.alloc(32, 9),
    delivery: { timeoutMs: 300, concurrency: 1 },
  } as unknown as AppConfig;
  const cipher = new SecretCipherService(config);
  let sender: DeliverySenderService;
  let server: Server;
  let url: string;
  let seen: Record<string, string | string[] | undefined>[];

  beforeAll(async () => {
    seen = [];
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    sender = await senderFor(config, cipher);
  });
  afterAll(async () => {
    await destinations.onApplicationShutdown();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const request = (fields: Partial<Parameters<DeliverySenderService['send']>[0]>) =>
    sender.send({
      deliveryId: '6f1c1c3e-0000-4000-8000-000000000003',
      event: 'job.started',
      ownerClientId: 'alpha',
      url,
      body: '{}',
      secretEncrypted: cipher.encrypt('secret'),
      previousSecretEncrypted: null,
      attempt: 2,
      ...fields,
    });

  it('sends the sealed custom headers, the service headers after them', async () => {
    const headersEncrypted = cipher.encrypt(
      JSON.stringify({ Authorization: 'Bearer t0ken', 'X-Tenant': 'acme' }),
      'webhook-headers',
    );
    expect(await request({ headersEncrypted })).toMatchObject({ ok: true, statusCode: 200 });
    expect(seen.at(-1)).toMatchObject({
      authorization: 'Bearer t0ken',
      'x-tenant': 'acme',
      'x-service-attempt': '2',
    });
  });

  it('fails an attempt whose custom headers no longer decrypt, saying why', async () => {
    const sealedElsewhere = new SecretCipherService({
      secretsEncryptionKey: Buffer.alloc(32, 1),
    } as AppConfig).encrypt('{}', 'webhook-headers');
    expect(await request({ headersEncrypted: sealedElsewhere })).toMatchObject({
      ok: false,
      statusCode: null,
      error: expect.stringContaining('custom headers cannot be decrypted'),
    });
  });

  it('fails an attempt to a broker the configuration no longer has, naming it', async () => {
    const result = await request({
      url: null,
      destination: { type: 'nats', broker: 'gone', subject: 'a.b' },
    });
    expect(result).toMatchObject({ ok: false, statusCode: null, responseBody: null });
    expect(result.error).toBe(
      'not published: destination.broker "gone" is not a nats broker of this service',
    );
  });
});
