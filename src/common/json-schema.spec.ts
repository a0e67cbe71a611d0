import { toOpenApi30 } from './json-schema';

describe('toOpenApi30', () => {
  it('rewrites the 2020-12 keywords that OpenAPI 3.0 lacks, at every depth', () => {
    expect(
      toOpenApi30({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          kind: { const: 'job.started' },
          id: { type: ['string', 'null'], description: 'd' },
          none: { type: 'null' },
          list: { type: 'array', items: { type: ['integer', 'null'] } },
          open: { type: 'object', additionalProperties: { const: 1 } },
        },
        oneOf: [{ required: ['id'] }, { properties: { x: { const: 2 } } }],
        examples: [{ kind: 'job.started' }, { kind: 'other' }],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        kind: { enum: ['job.started'] },
        id: { type: 'string', nullable: true, description: 'd' },
        none: { nullable: true, type: 'object', enum: [null] },
        list: { type: 'array', items: { type: 'integer', nullable: true } },
        open: { type: 'object', additionalProperties: { enum: [1] } },
      },
      oneOf: [{ required: ['id'] }, { properties: { x: { enum: [2] } } }],
      example: { kind: 'job.started' },
    });
  });

  it('keeps additionalProperties: true and plain keywords as they are', () => {
    const schema = { type: 'string', format: 'uuid', pattern: '^a', additionalProperties: true };
    expect(toOpenApi30(schema)).toEqual(schema);
  });

  it('refuses a type list that 3.0 cannot say', () => {
    expect(() => toOpenApi30({ type: ['string', 'integer'] })).toThrow('no 3.0 form');
  });
});
