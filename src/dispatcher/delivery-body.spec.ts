import { createHmac } from 'node:crypto';
import { deliveryBody, signBody } from './delivery-body';

describe('deliveryBody', () => {
  it('serialises the SPEC §4 fields in order, with created_at in UTC', () => {
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
      },
    });
    expect(body).toBe(
      '{"id":"e1","event":"job.started","created_at":"2026-01-01T10:00:05.123Z",' +
        '"data":{"topic":"Grüße"},' +
        '"source":{"platform":"zoom","event":"meeting.started","event_ts":1,"account_id":"a",' +
        '"tracking_id":"rid=1"}}',
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
