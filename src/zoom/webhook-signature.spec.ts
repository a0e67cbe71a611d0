import fc from 'fast-check';
import { signZoomRequest, verifyZoomSignature } from './webhook-signature';

const SECRET = 'test_secret_token';
const NOW_MS = 1_735_725_605_123;
const NOW_S = String(Math.floor(NOW_MS / 1000));
const options = { secrets: [SECRET], toleranceSeconds: 300, nowMs: NOW_MS };
const body = Buffer.from('{"event":"meeting.started","payload":{"object":{"topic":"Réunion ☕"}}}');

function signed(
  overrides: Partial<{ timestamp: string; signature: string; rawBody: Buffer }> = {},
) {
  const rawBody = overrides.rawBody ?? body;
  const timestamp = overrides.timestamp ?? NOW_S;
  return {
    timestamp,
    rawBody,
    signature: signZoomRequest(SECRET, timestamp, rawBody),
    ...overrides,
  };
}

describe('verifyZoomSignature', () => {
  it('accepts a request signed over its exact bytes, non-ASCII included', () => {
    expect(verifyZoomSignature(signed(), options)).toEqual({ ok: true, secret: SECRET });
  });

  it('accepts timestamps at the edge of the tolerance in both directions', () => {
    for (const delta of [-300, 300]) {
      const timestamp = String(Number(NOW_S) + delta);
      expect(verifyZoomSignature(signed({ timestamp }), options).ok).toBe(true);
    }
  });

  it.each([
    ['stale', String(Number(NOW_S) - 302), /more than 300 s/],
    ['future', String(Number(NOW_S) + 302), /more than 300 s/],
    ['milliseconds', String(NOW_MS), /Unix time in seconds/],
    ['not a number', 'yesterday', /Unix time in seconds/],
    ['negative', `-${NOW_S}`, /Unix time in seconds/],
    ['empty', '', /Unix time in seconds/],
  ])('rejects a %s timestamp even when correctly signed', (_name, timestamp, message) => {
    const check = verifyZoomSignature(signed({ timestamp }), options);
    expect(check).toEqual({ ok: false, message: expect.stringMatching(message) });
  });

  it.each([
    ['missing timestamp', { timestamp: undefined }, /x-zm-request-timestamp header is missing/],
    ['repeated timestamp', { timestamp: [NOW_S, NOW_S] }, /x-zm-request-timestamp header/],
    ['missing signature', { signature: undefined }, /x-zm-signature header is missing/],
    ['signature without v0=', { signature: 'a'.repeat(64) }, /v0= and 64/],
    ['short signature', { signature: 'v0=abcd' }, /v0= and 64/],
    ['upper-case signature', { signature: signed().signature.toUpperCase() }, /v0= and 64/],
  ])('rejects a %s', (_name, change, message) => {
    const check = verifyZoomSignature({ ...signed(), ...change }, options);
    expect(check).toEqual({ ok: false, message: expect.stringMatching(message) });
  });

  it('rejects a signature made with another secret or over other bytes', () => {
    const other = signZoomRequest('another_secret', NOW_S, body);
    expect(verifyZoomSignature(signed({ signature: other }), options).ok).toBe(false);
    const tampered = Buffer.from(body.toString().replace('started', 'ended__'));
    expect(verifyZoomSignature({ ...signed(), rawBody: tampered }, options)).toEqual({
      ok: false,
      message: 'x-zm-signature does not match the request',
    });
  });

  it('accepts a request signed with any of several secrets, and names the one that verified it', () => {
    const secrets = ['first_app_token', SECRET, 'rotated_token'];
    expect(verifyZoomSignature(signed(), { ...options, secrets })).toEqual({
      ok: true,
      secret: SECRET,
    });
    const byLast = signZoomRequest('rotated_token', NOW_S, body);
    expect(verifyZoomSignature(signed({ signature: byLast }), { ...options, secrets })).toEqual({
      ok: true,
      secret: 'rotated_token',
    });
    const byNone = signZoomRequest('unknown_token', NOW_S, body);
    expect(verifyZoomSignature(signed({ signature: byNone }), { ...options, secrets }).ok).toBe(
      false,
    );
  });

  describe('property: no mutation of a signed request is accepted', () => {
    const requests = fc.record({
      secret: fc.string({ minLength: 1, maxLength: 64 }),
      rawBody: fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)),
      skew: fc.integer({ min: -300, max: 300 }),
    });
    const sign = (r: { secret: string; rawBody: Buffer; skew: number }) => {
      const timestamp = String(Number(NOW_S) + r.skew);
      return {
        timestamp,
        rawBody: r.rawBody,
        signature: signZoomRequest(r.secret, timestamp, r.rawBody),
      };
    };
    const accepts = (secret: string, request: ReturnType<typeof sign>) =>
      verifyZoomSignature(request, { secrets: [secret], toleranceSeconds: 300, nowMs: NOW_MS }).ok;

    it('accepts every unmutated request (the baseline the mutations break)', () => {
      fc.assert(fc.property(requests, (r) => accepts(r.secret, sign(r))));
    });

    it('rejects any change to the body bytes', () => {
      const change = fc.oneof(
        fc.record({
          kind: fc.constant('flip' as const),
          at: fc.nat(),
          bit: fc.integer({ min: 0, max: 7 }),
        }),
        fc.record({
          kind: fc.constant('insert' as const),
          at: fc.nat(),
          byte: fc.integer({ min: 0, max: 255 }),
        }),
        fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
      );
      fc.assert(
        fc.property(requests, change, (r, c) => {
          const request = sign(r);
          const bytes = [...request.rawBody];
          if (c.kind === 'flip') {
            if (bytes.length === 0) return true;
            bytes[c.at % bytes.length] ^= 1 << c.bit;
          } else if (c.kind === 'insert') {
            bytes.splice(c.at % (bytes.length + 1), 0, c.byte);
          } else {
            if (bytes.length === 0) return true;
            bytes.splice(c.at % bytes.length, 1);
          }
          return !accepts(r.secret, { ...request, rawBody: Buffer.from(bytes) });
        }),
      );
    });

    it('rejects any other timestamp, even one inside the tolerance', () => {
      fc.assert(
        fc.property(
          requests,
          fc.integer({ min: -400, max: 400 }).filter((d) => d !== 0),
          (r, d) => {
            const request = sign(r);
            return !accepts(r.secret, {
              ...request,
              timestamp: String(Number(request.timestamp) + d),
            });
          },
        ),
      );
    });

    it('rejects any change to the signature', () => {
      fc.assert(
        fc.property(requests, fc.nat(), fc.string({ minLength: 1, maxLength: 1 }), (r, at, ch) => {
          const request = sign(r);
          const i = at % request.signature.length;
          if (request.signature[i] === ch) return true;
          const signature = request.signature.slice(0, i) + ch + request.signature.slice(i + 1);
          return !accepts(r.secret, { ...request, signature });
        }),
      );
    });

    it('rejects a request signed with any other secret', () => {
      fc.assert(
        fc.property(requests, fc.string({ minLength: 1, maxLength: 64 }), (r, other) => {
          fc.pre(other !== r.secret);
          return !accepts(other, sign(r));
        }),
      );
    });
  });
});
