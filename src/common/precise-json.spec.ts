import { PreciseNumber, parsePrecise, storableCopy, stringifyPrecise } from './precise-json';

describe('precise JSON', () => {
  it('keeps numbers a JavaScript number would change, and writes them back as they came', () => {
    const text = '{"a":1e400,"b":9223372036854775808,"c":0.5,"d":[1e-400,12],"e":"1e400"}';
    const value = parsePrecise(text) as Record<string, unknown>;
    expect(value.a).toEqual(new PreciseNumber('1e400'));
    expect(value.b).toEqual(new PreciseNumber('9223372036854775808'));
    expect(value.c).toBe(0.5);
    expect(stringifyPrecise(value)).toBe(text);
    // A plain JSON.stringify never turns one into null.
    expect(JSON.stringify(value)).not.toContain('null');
  });

  it('parses ordinary texts with JSON.parse alone, and takes what lossless-json refuses', () => {
    expect(parsePrecise('{"id":85746065432,"t":"x"}')).toEqual({ id: 85746065432, t: 'x' });
    // A key repeated with another value: JSON.parse's reading (the last one) stands.
    expect(parsePrecise('{"a":1,"a":12345678901234567890}')).toEqual({ a: 12345678901234567000 });
  });

  it('makes a copy jsonb holds: U+FFFD for U+0000 and lone surrogates, keys too', () => {
    const { value, changed } = storableCopy({
      'k\u0000': ['a\u0000b', 'c\ud800', '😀'],
      n: new PreciseNumber('1e400'),
      far: new PreciseNumber('1e99999'),
      ['__proto__']: 'data',
    });
    expect(changed).toBe(true);
    expect(stringifyPrecise(value)).toBe(
      '{"k\uFFFD":["a\uFFFDb","c\uFFFD","😀"],"n":1e400,"far":"1e99999","__proto__":"data"}',
    );
    expect(storableCopy({ a: 'plain', b: [1, null] }).changed).toBe(false);
  });
});
