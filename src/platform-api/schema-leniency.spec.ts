import { JsonSchema } from './platform-operations';
import {
  START_TIME_FORMAT,
  documentedBodySchema,
  isBodyRequired,
  isRealDateTime,
  lenientBodySchema,
  lenientPathSchema,
  lenientSchema,
} from './schema-leniency';

describe('lenientSchema', () => {
  it('reads oneOf as anyOf, at any depth', () => {
    const schema = {
      type: 'object',
      properties: {
        id: { oneOf: [{ type: 'string' }, { type: 'string', format: 'email' }] },
        list: { type: 'array', items: { oneOf: [{ type: 'integer' }] } },
      },
    };
    expect(lenientSchema(schema)).toEqual({
      type: 'object',
      properties: {
        id: { anyOf: [{ type: 'string' }, { type: 'string', format: 'email' }] },
        list: { type: 'array', items: { anyOf: [{ type: 'integer' }] } },
      },
    });
  });

  it('drops an enum its own type cannot hold, and keeps one it can', () => {
    expect(lenientSchema({ type: 'string', enum: [1, 3] })).toEqual({ type: 'string' });
    expect(lenientSchema({ type: 'integer', enum: [1, 3] })).toEqual({
      type: 'integer',
      enum: [1, 3],
    });
    expect(lenientSchema({ type: 'string', enum: ['1', '2'] })).toEqual({
      type: 'string',
      enum: ['1', '2'],
    });
  });

  it('reads an answer whose enum its type cannot hold as either, and other enums as open', () => {
    expect(lenientSchema({ type: 'string', enum: [1, 3], default: '1' }, 'answer')).toEqual({
      default: '1',
      anyOf: [{ type: 'string' }, { enum: [1, 3] }],
    });
    expect(lenientSchema({ type: 'integer', enum: [1, 3] }, 'answer')).toEqual({
      type: 'integer',
      description: 'Values the platform documents: 1, 3; it may send others.',
    });
  });

  it('leaves a property named like a keyword alone', () => {
    const schema = { properties: { required: { type: 'boolean' }, enum: { type: 'string' } } };
    expect(lenientSchema(schema)).toEqual(schema);
  });
});

describe('lenientBodySchema', () => {
  const meeting = {
    type: 'object',
    properties: {
      start_time: { type: 'string', format: 'date-time' },
      timezone: { type: 'string' },
    },
  };

  it('accepts UTC or local start_time, and wants timezone with a local one on create', () => {
    const create = lenientBodySchema(meeting, 'POST');
    expect(create.properties).toMatchObject({ start_time: { format: START_TIME_FORMAT } });
    expect(create.then).toEqual({ required: ['timezone'] });
    const update = lenientBodySchema(meeting, 'PATCH');
    expect(update.properties).toMatchObject({ start_time: { format: START_TIME_FORMAT } });
    expect(update.then).toBeUndefined();
  });

  it('leaves a start_time without a timezone beside it as published', () => {
    const other = { properties: { start_time: { type: 'string', format: 'date-time' } } };
    expect(lenientBodySchema(other, 'POST')).toEqual(other);
  });
});

describe('lenientPathSchema', () => {
  it('turns an integer path id into digits-or-UUID text', () => {
    const schema = lenientPathSchema({
      name: 'webinarId',
      in: 'path',
      required: true,
      schema: { type: 'integer', format: 'int64' },
    });
    expect(schema).toMatchObject({
      type: 'string',
      'x-message': 'must be a webinar id (digits) or a webinar UUID',
    });
    const pattern = new RegExp(schema.pattern as string);
    for (const ok of ['85746065432', '4444AAAiAAAAAiAiAiiAii==', '/ab//c+d==']) {
      expect(pattern.test(ok)).toBe(true);
    }
    for (const bad of ['a b', '../x', '1'.repeat(65), '']) expect(pattern.test(bad)).toBe(false);
  });

  it('states on a text path parameter what the engine refuses: empty, and a `.` or `..` part', () => {
    const param = {
      name: 'pollId',
      in: 'path' as const,
      required: true,
      schema: { type: 'string' },
    };
    const schema = lenientPathSchema(param);
    expect(schema).toMatchObject({ type: 'string', minLength: 1 });
    const pattern = new RegExp(schema.pattern as string, 'u');
    for (const good of ['abc', '...', '.a', 'a.b', 'a/b']) expect(pattern.test(good)).toBe(true);
    for (const bad of ['.', '..', 'a/..', '../b', 'a/./b']) expect(pattern.test(bad)).toBe(false);
  });
});

describe('isBodyRequired', () => {
  const body = (contentType: string, required: boolean, schema: JsonSchema) => ({
    contentType,
    required,
    schema,
  });

  it('reads an upload whose schema requires a part as required, whatever requestBody says', () => {
    expect(isBodyRequired(body('multipart/form-data', false, { required: ['file'] }))).toBe(true);
    expect(isBodyRequired(body('multipart/form-data', false, { properties: {} }))).toBe(false);
    expect(isBodyRequired(body('application/json', false, { required: ['topic'] }))).toBe(false);
    expect(isBodyRequired(body('application/json', true, {}))).toBe(true);
  });
});

describe('documentedBodySchema', () => {
  it("states a meeting's start_time as taken: UTC by pattern, local time in words", () => {
    const schema = documentedBodySchema({
      type: 'object',
      properties: {
        start_time: { type: 'string', format: 'date-time', description: 'When.' },
        timezone: { type: 'string' },
      },
    });
    const startTime = (schema.properties as Record<string, JsonSchema>).start_time;
    expect(startTime).toMatchObject({ format: 'date-time' });
    expect(startTime.description).toMatch(/^When\. .*offset is refused/);
    const utc = new RegExp(startTime.pattern as string, 'u');
    expect(utc.test('2025-01-31T14:00:00Z')).toBe(true);
    expect(utc.test('2025-01-31T14:00:00.250Z')).toBe(true);
    expect(utc.test('2025-01-31T15:00:00+01:00')).toBe(false);
  });
});

describe('isRealDateTime', () => {
  it.each([
    ['2025-01-31T14:00:00Z', true],
    ['2025-01-31T14:00:00', true],
    ['2025-01-31T14:00:00.123Z', true],
    ['2025-02-30T10:00:00Z', false],
    ['2025-01-31T24:00:00Z', false],
    ['2025-01-31T14:00:00+01:00', false],
    ['2025-01-31', false],
  ])('%s → %s', (text, expected) => {
    expect(isRealDateTime(text)).toBe(expected);
  });
});
