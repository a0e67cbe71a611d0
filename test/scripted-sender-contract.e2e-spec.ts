import { AppConfig } from '../src/config/config.types';
import { DestinationSenders } from '../src/destinations/destination-senders';
import {
  AttemptResult,
  DeliveryRequest,
  DeliverySenderService,
} from '../src/dispatcher/engine/delivery-sender.service';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { ScriptedSender } from './fakes/new-test-service';
import { startReceiver } from './support/receiver';
import { freePort } from './support/spawn-app';

/**
 * The scripted sender (test/fakes/new-test-service.ts), which the unit specs give the services
 * instead of the real one, against its real twin, DeliverySenderService sending over HTTP to a
 * local receiver: the same cases, each told an answer, must give the same attempt result. The
 * unit specs' retry, Retry-After and disabling decisions rest on these results
 * (docs/api.md#receiver-health), so a fake that drifted would let them pass on results the
 * real sender never gives.
 */

/** What a case tells the receiver to answer: a status (with Retry-After), or no answer at all. */
type Answer = { status: number; retryAfter?: string } | 'refused';

interface SenderUnderTest {
  sender: Pick<DeliverySenderService, 'send'>;
  /** A request to a receiver that will give `answer`. */
  answering(answer: Answer): Promise<DeliveryRequest>;
  close(): Promise<void>;
}

const config = {
  webhookAllowPrivateUrls: true,
  secretsEncryptionKey: Buffer.alloc(32, 7),
  delivery: { timeoutMs: 10_000, concurrency: 4 },
  destinationBrokers: [],
} as unknown as AppConfig;
const cipher = new SecretCipherService(config);
let attempts = 0;

const request = (url: string): DeliveryRequest => ({
  deliveryId: `6f1c1c3e-0000-4000-8000-${String(++attempts).padStart(12, '0')}`,
  event: 'job.started',
  ownerClientId: 'alpha',
  url,
  body: '{"event":"job.started"}',
  secretEncrypted: cipher.encrypt('whsec-contract'),
  previousSecretEncrypted: null,
  attempt: 1,
});

async function real(): Promise<SenderUnderTest> {
  const destinations = new DestinationSenders(config);
  await destinations.onModuleInit();
  const receiver = await startReceiver();
  return {
    sender: new DeliverySenderService(config, cipher, destinations),
    async answering(answer) {
      if (answer === 'refused') return request(`http://127.0.0.1:${await freePort()}/hook`);
      const headers: Record<string, string> = answer.retryAfter
        ? { 'retry-after': answer.retryAfter }
        : {};
      const route = receiver.route({ statuses: [answer.status], headers, body: '' }, 'contract');
      return request(route.url);
    },
    async close() {
      await destinations.onApplicationShutdown();
      await receiver.close();
    },
  };
}

function scripted(): SenderUnderTest {
  const sender = new ScriptedSender();
  return {
    sender,
    answering(answer) {
      if (answer === 'refused') sender.answerWith(null);
      else sender.answerWith(answer.status, answer.retryAfter ?? null);
      return Promise.resolve(request('https://receiver.example.com/hook'));
    },
    close: () => Promise.resolve(),
  };
}

describe.each([
  ['DeliverySenderService', real],
  ['ScriptedSender', scripted],
] as const)('attempt results (%s)', (_name, open) => {
  let under: SenderUnderTest;
  beforeAll(async () => {
    under = await open();
  });
  afterAll(() => under?.close());

  const attempt = async (
    answer: Answer,
  ): Promise<Omit<AttemptResult, 'startedAt' | 'durationMs'>> => {
    const { startedAt, durationMs, retryAfter, ...result } = await under.sender.send(
      await under.answering(answer),
    );
    expect(startedAt).toBeInstanceOf(Date);
    expect(durationMs).toBeGreaterThanOrEqual(0);
    // The real sender leaves it out where there was no answer; both mean "none".
    return { ...result, retryAfter: retryAfter ?? null };
  };

  it.each([200, 204])('counts a %i as delivered', async (status) => {
    expect(await attempt({ status })).toEqual({
      ok: true,
      statusCode: status,
      error: null,
      responseBody: '',
      retryAfter: null,
    });
  });

  it.each([400, 410, 500])('fails a %i with "HTTP <status>"', async (status) => {
    expect(await attempt({ status })).toEqual({
      ok: false,
      statusCode: status,
      error: `HTTP ${status}`,
      responseBody: '',
      retryAfter: null,
    });
  });

  it.each([
    [429, '5'],
    [503, 'Wed, 21 Oct 2026 07:28:00 GMT'],
  ])('passes on the Retry-After of a %i as it came', async (status, retryAfter) => {
    expect(await attempt({ status, retryAfter })).toMatchObject({
      ok: false,
      statusCode: status,
      error: `HTTP ${status}`,
      retryAfter,
    });
  });

  it('fails a redirect without following it', async () => {
    expect(await attempt({ status: 302 })).toMatchObject({
      ok: false,
      statusCode: 302,
      error: 'HTTP 302: redirects are not followed',
    });
  });

  it('fails a refused connection with no status and no response body', async () => {
    expect(await attempt('refused')).toEqual({
      ok: false,
      statusCode: null,
      error: expect.stringContaining('ECONNREFUSED'),
      responseBody: null,
      retryAfter: null,
    });
  });
});
