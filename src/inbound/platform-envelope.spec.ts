import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { TOO_DEEP_MESSAGE } from '../common/json-depth';
import { parseEnvelope } from './platform-envelope';

const refusal = (body: string): { status: number; message: string } => {
  try {
    parseEnvelope(Buffer.from(body));
  } catch (error) {
    if (error instanceof ApiError) return { status: error.getStatus(), message: error.message };
    throw error;
  }
  throw new Error('not refused');
};

describe('parseEnvelope on deep bodies (a 1 MiB body nested all the way)', () => {
  // Half a million levels: JSON.parse builds them without recursing; nothing after it may recurse.
  const depth = 500_000;
  it.each([
    ['arrays', `{"event":"meeting.started","payload":${'['.repeat(depth)}${']'.repeat(depth)}}`],
    // A number JSON.parse may change sends the text through the exact (recursive) parser too.
    [
      'arrays around a number past 2^53',
      `{"event":"meeting.started","payload":${'['.repeat(depth)}9007199254740993${']'.repeat(depth)}}`,
    ],
    [
      'objects',
      `{"event":"meeting.started","payload":${'{"a":'.repeat(170_000)}1${'}'.repeat(170_000)}}`,
    ],
  ])('refuses %s as too deep (400), never throwing anything else', (_what, body) => {
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    expect(refusal(body)).toEqual({ status: HttpStatus.BAD_REQUEST, message: TOO_DEEP_MESSAGE });
  });
});

describe('parseEnvelope telling its caller of a refusal (to count it)', () => {
  it.each([
    ['not JSON', '{"event":'],
    ['not an object', '[1]'],
    ['no event', '{"payload":{}}'],
    ['a URL validation without plainToken', '{"event":"endpoint.url_validation","payload":{}}'],
  ])('calls refused once before its 400 for %s', (_what, body) => {
    const refused = jest.fn();
    expect(() => parseEnvelope(Buffer.from(body), refused)).toThrow(ApiError);
    expect(refused).toHaveBeenCalledTimes(1);
  });

  it('does not call refused for an event it accepts, payload or none', () => {
    const refused = jest.fn();
    expect(parseEnvelope(Buffer.from('{"event":"meeting.started"}'), refused).event).toBe(
      'meeting.started',
    );
    expect(refused).not.toHaveBeenCalled();
  });
});
