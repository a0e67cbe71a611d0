import Ajv from 'ajv';
import { fieldName, validationDetails } from './validation-details';

describe('fieldName', () => {
  it.each([
    ['', 'body'],
    ['/topic', 'topic'],
    ['/settings/host_video', 'settings.host_video'],
    ['/tracking_fields/0/field', 'tracking_fields[0].field'],
    ['/a~1b/c~0d', 'a/b.c~d'],
  ])('%j → %s', (path, name) => {
    expect(fieldName(path, 'body')).toBe(name);
  });
});

describe('validationDetails', () => {
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
  const check = (schema: object, data: unknown) => {
    const validate = ajv.compile(schema);
    expect(validate(data)).toBe(false);
    return validationDetails(validate.errors ?? [], 'body');
  };

  it('sums up alternatives that all failed on their type', () => {
    const schema = { properties: { id: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } };
    expect(check(schema, { id: true })).toEqual([
      { field: 'id', message: 'id must be an integer or a string' },
    ]);
  });

  it('reports the alternative that came closest when one had the right type', () => {
    const schema = {
      properties: {
        s: {
          anyOf: [
            { type: 'object', properties: { a: { type: 'boolean' }, b: { type: 'boolean' } } },
            { type: 'string' },
          ],
        },
      },
    };
    expect(check(schema, { s: { a: 1 } })).toEqual([
      { field: 's.a', message: 's.a must be a boolean (true or false)' },
    ]);
  });

  it('uses a schema’s own message for a pattern', () => {
    const schema = {
      properties: { id: { type: 'string', pattern: '^\\d+$', 'x-message': 'must be digits' } },
    };
    expect(check(schema, { id: 'x' })).toEqual([{ field: 'id', message: 'id must be digits' }]);
  });

  it('states limits in words', () => {
    const schema = {
      properties: {
        n: { type: 'integer', maximum: 3 },
        s: { type: 'string', maxLength: 2 },
        l: { type: 'array', minItems: 1 },
        d: { type: 'string', enum: ['a', 'b'] },
      },
      required: ['r'],
    };
    expect(check(schema, { n: 4, s: 'abc', l: [], d: 'c' })).toEqual([
      { field: 'r', message: 'r is required' },
      { field: 'n', message: 'n must not be greater than 3' },
      { field: 's', message: 's must be shorter than or equal to 2 characters' },
      { field: 'l', message: 'l must contain at least 1 elements' },
      { field: 'd', message: 'd must be one of a, b' },
    ]);
  });
});
