import { createHmac } from 'node:crypto';
import {
  bodyOfSerialised,
  deliveryBody,
  jsonbOfSerialised,
  signBody,
  toJsonb,
} from './delivery-body';

describe('deliveryBody', () => {
  it('serialises the docs/api.md#notifications fields in order, with created_at in UTC', () => {
    const body = deliveryBody({
      id: 'e1',
      kind: 'job.started',
      createdAt: new Date(Date.UTC(2026, 0, 1, 10, 0, 5, 123)),
      data: { topic: 'Grüße' },
      source: {
        platform: 'zoom',
        event: 'meeting.started',
        event_ts: 1,
        account_id: 'a',
        tracking_id: 'rid=1',
        via: 'webhook',
      },
    });
    expect(body).toBe(
      '{"id":"e1","event":"job.started","created_at":"2026-01-01T10:00:05.123Z",' +
        '"data":{"topic":"Grüße"},' +
        '"source":{"platform":"zoom","event":"meeting.started","event_ts":1,"account_id":"a",' +
        '"tracking_id":"rid=1","via":"webhook"}}',
    );
  });

  it('keeps source null when there is none', () => {
    const body = deliveryBody({
      id: 'e',
      kind: 'k',
      createdAt: new Date(0),
      data: {},
      source: null,
    });
    expect(JSON.parse(body).source).toBeNull();
  });
});

describe('bodyOfSerialised', () => {
  it('gives the bytes JSON.stringify gives the whole body, from data and source serialised apart', () => {
    const event = {
      id: '6f1c2a9e-0000-4000-8000-000000000001',
      kind: 'job.started',
      createdAt: new Date(Date.UTC(2026, 10, 24, 1, 2, 3, 4)),
    };
    const data = {
      topic: 'quote " backslash \\ nul \u0000 emoji 🎉 lone \ud800 line\u2028',
      nested: { list: [1, 'two', null, { deep: true }], skipped: undefined },
      at: new Date(0),
    };
    const source = { platform: 'zoom', event: 'meeting.started', event_ts: 1, account_id: 'a' };
    const whole = JSON.stringify({
      id: event.id,
      event: event.kind,
      created_at: event.createdAt.toISOString(),
      data,
      source,
    });
    expect(bodyOfSerialised(event, JSON.stringify(data), JSON.stringify(source))).toBe(whole);
    expect(bodyOfSerialised(event, JSON.stringify(data), 'null')).toBe(
      JSON.stringify({ ...JSON.parse(whole), source: null }),
    );
  });

  it('jsonbOfSerialised is toJsonb of the value, reusing the JSON when it has no U+0000', () => {
    const clean = { topic: 'plain' };
    const json = JSON.stringify(clean);
    expect(jsonbOfSerialised(clean, json)).toBe(json);
    const nul = { topic: 'a\u0000b' };
    expect(jsonbOfSerialised(nul, JSON.stringify(nul))).toBe(toJsonb(nul));
    expect(JSON.parse(toJsonb(nul))).toEqual({ topic: 'a\uFFFDb' });
  });
});

describe('signBody', () => {
  it('is lowercase hex HMAC-SHA256 over the UTF-8 bytes, the same for string and Buffer', () => {
    const body = '{"topic":"Grüße 🎉"}';
    const expected = createHmac('sha256', 'secret-0123456789')
      .update(Buffer.from(body, 'utf8'))
      .digest('hex');
    expect(signBody('secret-0123456789', body)).toBe(expected);
    expect(signBody('secret-0123456789', Buffer.from(body))).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with the key and with a single byte of the body', () => {
    const base = signBody('k1-0123456789abcdef', '{"a":1}');
    expect(signBody('k2-0123456789abcdef', '{"a":1}')).not.toBe(base);
    expect(signBody('k1-0123456789abcdef', '{"a":2}')).not.toBe(base);
  });
});

describe('toJsonb', () => {
  it('keeps a value as JSON.stringify has it when no string holds U+0000', () => {
    const value = { topic: 'Grüße \\u0000 spelled out', n: 1 };
    expect(toJsonb(value)).toBe(JSON.stringify(value));
  });

  it('replaces U+0000, which jsonb cannot hold, in every string', () => {
    expect(JSON.parse(toJsonb({ a: 'x\u0000y', b: ['\u0000'] }))).toEqual({
      a: 'x\uFFFDy',
      b: ['\uFFFD'],
    });
  });
});
