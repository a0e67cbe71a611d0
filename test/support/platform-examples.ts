import {
  JsonSchema,
  PlatformOperation,
  PlatformParameter,
} from '../../src/platform-api/platform-operations';

/**
 * Valid requests built from the platform's own schemas (the route table): every documented
 * query parameter and every documented body field is filled in, so a service that refused or
 * dropped one would fail the contract test.
 */

export const MEETING_ID = '85746065432';
export const USER_ID = 'jchill@example.com';
/** A meeting UUID that must be double-encoded upstream. */
export const MEETING_UUID = '/ajXp112QmuoKj4854875==';

const STRING_FORMATS: Record<string, string> = {
  email: 'jchill@example.com',
  date: '2025-01-31',
  'date-time': '2025-01-31T14:00:00Z',
  uri: 'https://example.com/x',
  url: 'https://example.com/x',
  'Hex color code': '#0E72ED',
};

function fitsType(type: unknown, value: unknown): boolean {
  if (type === 'integer') return Number.isInteger(value);
  if (type === 'number') return typeof value === 'number';
  if (type === 'string') return typeof value === 'string';
  if (type === 'boolean') return typeof value === 'boolean';
  return true;
}

function numberOf(schema: JsonSchema): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : 1;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  const preferred = typeof schema.default === 'number' ? schema.default : Math.max(min, 1);
  return Math.min(Math.max(preferred, min), max);
}

function stringOf(schema: JsonSchema): string {
  if (typeof schema.format === 'string' && STRING_FORMATS[schema.format]) {
    return STRING_FORMATS[schema.format];
  }
  const min = typeof schema.minLength === 'number' ? schema.minLength : 1;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : 64;
  if (typeof schema.default === 'string' && schema.default.length >= min) return schema.default;
  return 'x'.repeat(Math.min(Math.max(min, 8), max));
}

/** A value of `schema` with every property filled in (first alternative of any oneOf/anyOf). */
export function exampleOf(schema: JsonSchema): unknown {
  const alternatives = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (alternatives) return exampleOf(alternatives[0]);
  if (Array.isArray(schema.enum)) {
    const fitting = schema.enum.find((v) => fitsType(schema.type, v));
    if (fitting !== undefined) return fitting;
    // An enum its own type cannot hold (a string listing numbers): the platform's own examples
    // write the member as that type ('1' for 1).
    return schema.type === 'string' ? String(schema.enum[0]) : schema.enum[0];
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (schema.type === 'object' || properties) {
    return Object.fromEntries(
      Object.entries(properties ?? {}).map(([name, sub]) => [name, exampleOf(sub)]),
    );
  }
  switch (schema.type) {
    case 'array': {
      const count = Math.max(typeof schema.minItems === 'number' ? schema.minItems : 1, 1);
      return Array.from({ length: count }, () => exampleOf((schema.items ?? {}) as JsonSchema));
    }
    case 'integer':
    case 'number':
      return numberOf(schema);
    case 'boolean':
      return typeof schema.default === 'boolean' ? schema.default : true;
    default:
      return stringOf(schema);
  }
}

function pathValue(param: PlatformParameter): string {
  if (param.name === 'userId') return USER_ID;
  if (/uuid$/i.test(param.name)) return MEETING_UUID;
  const first = ((param.schema.oneOf ?? param.schema.anyOf) as JsonSchema[] | undefined)?.[0];
  const type = first?.type ?? param.schema.type;
  if (type === 'integer' || /^(meeting|webinar)Id$/.test(param.name)) return MEETING_ID;
  return `${param.name.replace(/Id$/, '')}-1`;
}

export interface ExampleRequest {
  /** The platform path with its parameters, as sent to this service (encoded once). */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  body?: string;
  contentType?: string;
}

const BOUNDARY = 'contract-test-boundary';

/** Each text property as a file part (the uploads' files are typed string), any other as its text. */
function multipartOf(schema: JsonSchema): string {
  const parts = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(
    ([name, property]) =>
      property.type === 'string'
        ? `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"; filename="${name}.png"\r\n` +
          `content-type: image/png\r\n\r\nPNG-bytes-of-${name}\r\n`
        : `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n` +
          `${String(exampleOf(property))}\r\n`,
  );
  return `${parts.join('')}--${BOUNDARY}--\r\n`;
}

/** A valid request to `op`, every documented parameter and field included. */
export function exampleRequest(op: PlatformOperation): ExampleRequest {
  const params: Record<string, string> = {};
  const query = new URLSearchParams();
  for (const p of op.parameters) {
    if (p.in === 'path') params[p.name] = pathValue(p);
    else query.set(p.name, String(exampleOf(p.schema)));
  }
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name]));
  if (!op.body) return { path, params, query };
  if (op.body.contentType === 'application/json') {
    return {
      path,
      params,
      query,
      body: JSON.stringify(exampleOf(op.body.schema)),
      contentType: 'application/json',
    };
  }
  return {
    path,
    params,
    query,
    body: multipartOf(op.body.schema),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}
