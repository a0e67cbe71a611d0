import fc from 'fast-check';
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  SignedAttempt,
  signatureHeaders,
  standardWebhooksKey,
  unixSeconds,
} from './delivery-signature';

const RAW_SECRET = 'receiver-secret-Grüße-0123456789';
const WHSEC_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const BODY = '{"id":"e1","event":"job.started","data":{"topic":"Grüße 🎉"}}';
const now = () => unixSeconds(new Date());

const attempt = (over: Partial<SignedAttempt> = {}): SignedAttempt => ({
  deliveryId: '5f0c6a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f',
  body: Buffer.from(BODY, 'utf8'),
  timestamp: now(),
  secrets: { current: RAW_SECRET, previous: null },
  ...over,
});

/** The official library, keyed as a receiver holding `secret` would key it (docs/receiving.md). */
const verifierFor = (secret: string) =>
  secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });

describe('signatureHeaders', () => {
  it('keeps x-service-signature as the seed has it: hex HMAC over the body alone', () => {
    const headers = signatureHeaders(attempt());
    expect(headers['x-service-signature']).toBe(
      createHmac('sha256', RAW_SECRET).update(BODY, 'utf8').digest('hex'),
    );
    expect(headers['x-service-signature-previous']).toBeUndefined();
  });

  it('carries the delivery id and the attempt time as webhook-id and webhook-timestamp', () => {
    const headers = signatureHeaders(attempt({ timestamp: 1735725605 }));
    expect(headers['webhook-id']).toBe('5f0c6a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f');
    expect(headers['webhook-timestamp']).toBe('1735725605');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it.each([
    ['a plain secret (raw UTF-8 key)', RAW_SECRET],
    ['a whsec_ secret (base64 key)', WHSEC_SECRET],
  ])('verifies with the official standardwebhooks library for %s', (_name, secret) => {
    const body = Buffer.from(BODY, 'utf8');
    const headers = signatureHeaders(
      attempt({ body, secrets: { current: secret, previous: null } }),
    );
    expect(verifierFor(secret).verify(body, headers)).toEqual(JSON.parse(BODY));
    expect(verifierFor(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('produces exactly what the library signs', () => {
    const a = attempt({ secrets: { current: WHSEC_SECRET, previous: null } });
    expect(signatureHeaders(a)['webhook-signature']).toBe(
      new Webhook(WHSEC_SECRET).sign(a.deliveryId, new Date(a.timestamp * 1000), BODY),
    );
  });

  it('fails verification for a tampered body, another id, a wrong secret or an old timestamp', () => {
    const headers = signatureHeaders(attempt());
    const verifier = verifierFor(RAW_SECRET);
    expect(() => verifier.verify(BODY.replace('Grüße', 'Grusse'), headers)).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifier.verify(BODY, { ...headers, 'webhook-id': 'another' })).toThrow(
      'No matching signature found',
    );
    expect(() => verifierFor(`${RAW_SECRET}x`).verify(BODY, headers)).toThrow(
      'No matching signature found',
    );
    const old = signatureHeaders(attempt({ timestamp: now() - 6 * 60 }));
    expect(() => verifier.verify(BODY, old)).toThrow('Message timestamp too old');
  });

  it('signs with both secrets during a rotation, new first, and each verifies', () => {
    const headers = signatureHeaders(
      attempt({ secrets: { current: WHSEC_SECRET, previous: RAW_SECRET } }),
    );
    const [first, second, ...rest] = headers['webhook-signature'].split(' ');
    expect(rest).toEqual([]);
    expect(first).toBe(
      signatureHeaders(attempt({ secrets: { current: WHSEC_SECRET, previous: null } }))[
        'webhook-signature'
      ],
    );
    expect(second).toBe(
      signatureHeaders(attempt({ secrets: { current: RAW_SECRET, previous: null } }))[
        'webhook-signature'
      ],
    );
    expect(verifierFor(WHSEC_SECRET).verify(BODY, headers)).toBeTruthy();
    expect(verifierFor(RAW_SECRET).verify(BODY, headers)).toBeTruthy();
    expect(headers['x-service-signature']).toBe(
      createHmac('sha256', WHSEC_SECRET).update(BODY).digest('hex'),
    );
    expect(headers['x-service-signature-previous']).toBe(
      createHmac('sha256', RAW_SECRET).update(BODY).digest('hex'),
    );
  });

  it('verifies with the library for any body and secret (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.string({ unit: 'grapheme', minLength: 16, maxLength: 64 }),
        fc.integer({ min: 1, max: 10 }),
        (text, secret, attemptNo) => {
          const body = Buffer.from(JSON.stringify({ text, attemptNo }), 'utf8');
          const headers = signatureHeaders(
            attempt({ body, secrets: { current: secret, previous: null } }),
          );
          const key = standardWebhooksKey(secret);
          expect(new Webhook(key, { format: 'raw' }).verify(body, headers)).toEqual({
            text,
            attemptNo,
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('standardWebhooksKey', () => {
  it('decodes a whsec_ + base64 secret to its bytes', () => {
    const bytes = randomBytes(32);
    expect(standardWebhooksKey(`whsec_${bytes.toString('base64')}`)).toEqual(bytes);
  });

  it.each([
    'whsec_not base64 at all!',
    'whsec_abc', // unpadded: not the canonical form
    'whsec_',
    'my-whsec_c2VjcmV0c2VjcmV0',
    'plain-secret-0123456789',
  ])('takes the UTF-8 bytes of %j', (secret) => {
    expect(standardWebhooksKey(secret)).toEqual(Buffer.from(secret, 'utf8'));
  });
});
