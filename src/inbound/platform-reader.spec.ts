import { PreciseNumber } from '../common/precise-json';
import { at, asList, asRecord, asText, recordsOf } from './platform-reader';

describe('platform-reader', () => {
  it('answers typed values or empty ones, whatever it is given', () => {
    for (const odd of [null, undefined, 1, 'x', [], true, new PreciseNumber('1e400')]) {
      expect(asRecord(odd)).toEqual({});
    }
    expect(asText(123)).toBe('123');
    expect(asText(new PreciseNumber('9223372036854775808'))).toBe('9223372036854775808');
    expect(asText({})).toBeNull();
    expect(asList('x')).toEqual([]);
    expect(recordsOf([null, { a: 1 }, 'x', [1], 7])).toEqual([{ a: 1 }]);
  });

  it('reads a path, undefined wherever a step is not an object', () => {
    const value = { payload: { object: { id: 5 }, list: [1] } };
    expect(at(value, 'payload', 'object', 'id')).toBe(5);
    expect(at(value, 'payload', 'list', '0')).toBeUndefined();
    expect(at({ payload: null }, 'payload', 'object')).toBeUndefined();
    expect(at(value, 'payload', 'toString')).toBeUndefined();
  });
});
