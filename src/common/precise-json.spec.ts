import {
  PreciseNumber,
  parsePrecise,
  revivePrecise,
  storableCopy,
  stringifyPrecise,
} from './precise-json';

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
      '{"k\uFFFD":["a\uFFFDb","c\uFFFD","😀"],"n":"1e400","far":"1e99999","__proto__":"data"}',
    );
    expect(storableCopy({ a: 'plain', b: [1, null] }).changed).toBe(false);
  });

  it('keeps the text of every number JavaScript or jsonb would spell otherwise', () => {
    const numbers = [
      '1e400',
      '1.50',
      '1E2',
      '-0',
      '-0.0',
      '1e-400',
      '1e-7',
      '0.0000001',
      '0.12345678901234567890123',
      '9223372036854775807',
      '1e15990',
      '123456789012345678901234',
      `0.${'7'.repeat(17_000)}`,
    ];
    const text = `{"n":[${numbers.join(',')}],"plain":[0,-1,0.5,85746065432,1.25e0]}`;
    const value = parsePrecise(text) as { n: unknown[]; plain: unknown[] };
    expect(stringifyPrecise(value)).toBe(text);
    for (const n of value.n) expect(n).toBeInstanceOf(PreciseNumber);
    expect(value.plain.slice(0, 4)).toEqual([0, -1, 0.5, 85746065432]);
    // Texts with no such number are JSON.parse's alone.
    expect(parsePrecise('{"a":[1,2.5,-3,"1e5 in text"]}')).toEqual({
      a: [1, 2.5, -3, '1e5 in text'],
    });
  });

  it('records in jsonb what numeric holds at a bounded cost, the rest as its text', () => {
    const inJsonb = (text: string) => new PreciseNumber(text).inJsonb;
    expect(inJsonb('1.50')).toBe('itself');
    expect(inJsonb('9223372036854775807')).toBe('itself');
    expect(inJsonb('1E2')).toBe('respelt');
    expect(inJsonb('-0')).toBe('respelt');
    expect(inJsonb('1.5e-10')).toBe('respelt');
    // Plain decimal past 32 characters and its own length: the text.
    expect(inJsonb('1e400')).toBe('text');
    expect(inJsonb('1e15990')).toBe('text');
    expect(inJsonb('1e-400')).toBe('text');
    // Past numeric's 16,383 fraction digits, however it is spelt.
    expect(inJsonb(`0.${'1'.repeat(16_384)}`)).toBe('text');
    expect(inJsonb(`0.${'1'.repeat(16_383)}`)).toBe('itself');
    const bomb = { n: Array.from({ length: 2000 }, () => new PreciseNumber('1e15990')) };
    const { value, changed } = storableCopy(bomb);
    expect(changed).toBe(true);
    expect(stringifyPrecise(value).length).toBeLessThan(2000 * 12);
    const { value: kept, changed: respelt } = storableCopy({ a: new PreciseNumber('1.50') });
    expect(respelt).toBe(false);
    expect(stringifyPrecise(kept)).toBe('{"a":1.50}');
    expect(storableCopy({ a: new PreciseNumber('1E2') }).changed).toBe(true);
  });

  it('revivePrecise reads back what a plain JSON.stringify made of PreciseNumbers, and only that', () => {
    const text = '{"a":{"$in":[9007199254740993,1]},"__proto__":{"b":"\\u0001precise-number:x"}}';
    const stored = JSON.parse(JSON.stringify(parsePrecise(text))) as unknown;
    const revived = revivePrecise(stored);
    expect(stringifyPrecise(revived)).toBe(
      '{"a":{"$in":[9007199254740993,1]},"__proto__":{"b":"\\u0001precise-number:x"}}',
    );
    expect(Object.keys(revived as object)).toEqual(['a', '__proto__']);
  });
});
