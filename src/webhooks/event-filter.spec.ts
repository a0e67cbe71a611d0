import { FILTER_BODY, FILTER_CASES, FILTER_ERRORS } from './event-filter.cases';
import { stringifyPrecise } from '../common/precise-json';
import { FILTER_OPERATORS, FilterError, compileFilter, filterAsSent } from './event-filter';

describe('compileFilter', () => {
  it.each(FILTER_CASES)('%s', (_, filter, expected) => {
    expect(compileFilter(filter).matches(FILTER_BODY)).toBe(expected);
  });

  it('has a case for every operator and combinator', () => {
    const used = JSON.stringify(FILTER_CASES.map(([, filter]) => filter));
    for (const op of [...FILTER_OPERATORS, '$and', '$or', '$not']) expect(used).toContain(op);
  });

  it.each(FILTER_ERRORS)('refuses %s, naming it', (_, filter, fragment) => {
    let error: unknown;
    try {
      compileFilter(filter);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FilterError);
    expect((error as Error).message).toMatch(/^filter: /);
    expect((error as Error).message).toContain(fragment);
  });

  it('passes operands as variables, never inside the path', () => {
    const compiled = compileFilter({ 'data.topic': { $prefix: '") || true || ("' } });
    expect(compiled.jsonpath).toBe(
      'exists($."data"."topic" ? (@.type() == "string" && @ starts with $v0))',
    );
    expect(compiled.vars).toEqual({ v0: '") || true || ("' });
  });

  it('matches a body that is not an object as nothing but negations', () => {
    expect(compileFilter({ a: 1 }).matches('text')).toBe(false);
    expect(compileFilter({ a: { $exists: false } }).matches(null)).toBe(true);
  });

  it('filterAsSent reads the filter again off the bytes, with its numbers as sent', () => {
    const bytes = Buffer.from('\uFEFF{"url":"u","filter":{"data.id":{"$gt":9223372036854775806}}}');
    const parsed = JSON.parse(bytes.toString('utf8').slice(1)) as { filter: unknown };
    const filter = filterAsSent(bytes, parsed.filter);
    expect(stringifyPrecise(filter)).toBe('{"data.id":{"$gt":9223372036854775806}}');
    expect(compileFilter(filter).jsonpath).toBe(
      'exists($."data"."id" ? (@.type() == "number" && @ > 9223372036854775806))',
    );
    // No filter in the body (null, absent), or no bytes kept: the DTO's value stands.
    expect(filterAsSent(bytes, null)).toBeNull();
    expect(filterAsSent(undefined, { a: 1 })).toEqual({ a: 1 });
  });
});
