import { JsonSchema, PlatformParameter } from './platform-operations';

/**
 * docs/api.md#platform-passthrough: where the platform's published document contradicts itself, the request is
 * forwarded, not refused. These rewrites are applied to each schema before it is compiled; the
 * route table keeps the document's own schemas.
 */

/** Format of `start_time` on meetings and webinars: UTC with `Z`, or local time (no offset). */
export const START_TIME_FORMAT = 'platform-start-time';
export const START_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z?)$/;

const LOCAL_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?$';

/** A platform id (digits) or a meeting/webinar UUID (base64, `/` and `+` included). */
export const ID_OR_UUID = '^[A-Za-z0-9+/=_-]{1,64}$';

/**
 * A path value none of whose `/`-separated parts is `.` or `..` (the engine refuses those: they
 * would move the platform's path), as the document states it for text path parameters.
 */
const ONE_SEGMENT = '^(?!(?:[^/]*/)*\\.\\.?(?:/|$))';

/** Keywords whose value is data, not a sub-schema: copied as they are. */
const DATA_KEYWORDS = new Set(['enum', 'default', 'required', 'const', 'example']);

function fits(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

/**
 * `oneOf` read as `anyOf` (the document's alternatives overlap: a user id and an e-mail address
 * are both strings), and an enum its own type cannot hold (a string parameter listing numbers)
 * is not enforced. Read for an `answer` (what the platform sends), an enum is a list of the
 * values known so far, not a promise (the platform adds values faster than its document: a
 * recording's `TIMELINE` file), and a field whose enum its type cannot hold is either a value
 * of its type or one of the enum's (the platform writes `1` where its document says string,
 * and its own examples write `'1'`).
 */
export function lenientSchema(
  schema: JsonSchema,
  reading: 'request' | 'answer' = 'request',
): JsonSchema {
  const out: JsonSchema = {};
  let contradictory = false;
  const sub = (v: JsonSchema) => lenientSchema(v, reading);
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) {
      if (key === 'enum' && Array.isArray(value) && !value.every((v) => fits(schema.type, v))) {
        contradictory = true;
        continue;
      }
      if (key === 'enum' && reading === 'answer' && Array.isArray(value)) {
        out.description = `Values the platform documents: ${value.join(', ')}; it may send others.`;
        continue;
      }
      out[key] = value;
    } else if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, s]) => [name, sub(s)]),
      );
    } else if (Array.isArray(value)) {
      out[key === 'oneOf' ? 'anyOf' : key] = value.map((v) =>
        v !== null && typeof v === 'object' ? sub(v as JsonSchema) : v,
      );
    } else if (value !== null && typeof value === 'object') {
      out[key] = sub(value as JsonSchema);
    } else {
      out[key] = value;
    }
  }
  if (reading === 'answer' && contradictory && out.anyOf === undefined) {
    const { type, ...rest } = out;
    return { ...rest, anyOf: [{ type }, { enum: schema.enum }] };
  }
  return out;
}

/** The UTC `start_time`s this service takes, as the document states them (with `date-time`). */
const UTC_START_TIME = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$';

const START_TIME_RULE =
  'Taken here as UTC (`2025-01-31T14:00:00Z`), or as local time (`2025-01-31T14:00:00`, no ' +
  'offset) with `timezone`; a time with an offset is refused (400), since the platform reads ' +
  'only those two.';

/** Whether a body schema is a meeting's or webinar's: one with both `start_time` and `timezone`. */
const schedules = (properties: Record<string, JsonSchema> | undefined): boolean =>
  properties?.start_time !== undefined && properties.timezone !== undefined;

/**
 * A request body schema as the API document states it: the leniencies above, and the
 * `start_time` of meetings and webinars with the rule lenientBodySchema applies (its UTC form as
 * a pattern beside `date-time`; the local form, which no JSON Schema format names, in words).
 */
export function documentedBodySchema(schema: JsonSchema): JsonSchema {
  const out = lenientSchema(schema);
  const properties = out.properties as Record<string, JsonSchema> | undefined;
  if (!properties || !schedules(properties)) return out;
  const { description } = properties.start_time;
  properties.start_time = {
    ...properties.start_time,
    pattern: UTC_START_TIME,
    description: [description, START_TIME_RULE].filter(Boolean).join(' '),
  };
  return out;
}

/**
 * A request body schema with the leniencies above, and `start_time` of meetings and webinars
 * (the bodies that have both `start_time` and `timezone`) accepted as UTC or as local time; on
 * create (`POST`) a local time needs `timezone` beside it, since nothing else says which zone.
 */
export function lenientBodySchema(schema: JsonSchema, method: string): JsonSchema {
  const out = lenientSchema(schema);
  const properties = out.properties as Record<string, JsonSchema> | undefined;
  if (!properties || !schedules(properties)) return out;
  properties.start_time = { ...properties.start_time, format: START_TIME_FORMAT };
  if (method !== 'POST') return out;
  return {
    ...out,
    if: {
      properties: { start_time: { type: 'string', pattern: LOCAL_TIME } },
      required: ['start_time'],
    },
    then: { required: ['timezone'] },
  };
}

/**
 * A path parameter's schema. Path values are text, so an id the document types as an integer
 * is written here as the text of one, and it also accepts the platform's UUIDs (which the
 * platform takes in the same place); a text one states the engine's refusal of `.` and `..`.
 */
export function lenientPathSchema(param: PlatformParameter): JsonSchema {
  const schema = lenientSchema(param.schema);
  // Text, or alternatives of which text is one (a path value is always text).
  if (schema.type !== 'integer' && schema.pattern === undefined) {
    return { minLength: 1, ...schema, pattern: ONE_SEGMENT };
  }
  if (schema.type !== 'integer') return schema;
  const what = param.name.replace(/(Id|UUID)$/i, '') || 'id';
  return {
    type: 'string',
    pattern: ID_OR_UUID,
    'x-message': `must be a ${what} id (digits) or a ${what} UUID`,
  };
}

/** Whether y-m-d h:m:s names a real instant (not 2025-02-30 or 25:00). */
export function isRealDateTime(text: string): boolean {
  const m = START_TIME.exec(text);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return (
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s
  );
}

/**
 * Whether a request body must be sent. The platform's document marks the uploads of a webinar's
 * wallpaper and virtual background optional (`requestBody.required: false`) while their schema
 * requires the `file` part: an upload without its file is read as the schema says, so a body
 * whose schema requires a part is required (docs/api.md#the-platforms-spec-errors-we-work-around).
 */
export function isBodyRequired(body: {
  contentType: string;
  required: boolean;
  schema: JsonSchema;
}): boolean {
  return (
    body.required ||
    (body.contentType === 'multipart/form-data' &&
      Array.isArray(body.schema.required) &&
      body.schema.required.length > 0)
  );
}
