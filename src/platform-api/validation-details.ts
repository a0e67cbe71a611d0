import type { ErrorObject } from 'ajv';
import { ErrorDetail } from '../common/error-response';
import { START_TIME_FORMAT } from './schema-leniency';

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_MESSAGES: Record<string, string> = {
  date: 'must be a date written yyyy-mm-dd, like 2025-01-31',
  'date-time': 'must be an ISO 8601 date-time, like 2025-01-31T14:00:00Z',
  email: 'must be an e-mail address (RFC 5321)',
  uri: 'must be a URI',
  int64: 'must be an integer from -2^53 to 2^53',
  [START_TIME_FORMAT]:
    'must be a UTC time like 2025-01-31T14:00:00Z, or a local time like 2025-01-31T14:00:00 ' +
    'with timezone',
};

/** `/settings/host_video` → `settings.host_video`, `/tracking_fields/0/field` → `tracking_fields[0].field`. */
export function fieldName(instancePath: string, root: string): string {
  if (instancePath === '') return root;
  let out = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(segment) ? `[${segment}]` : out ? `.${segment}` : segment;
  }
  return out;
}

const typeNames = (type: unknown): string =>
  String(type)
    .split(',')
    .map((t) => TYPE_NAMES[t] ?? t)
    .join(' or ');

function message(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      return `must be ${typeNames(p.type)}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'maximum':
      return `must not be greater than ${String(p.limit)}`;
    case 'minimum':
      return `must not be less than ${String(p.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(p.limit)}`;
    case 'maxLength':
      return `must be shorter than or equal to ${String(p.limit)} characters`;
    case 'minLength':
      return `must be longer than or equal to ${String(p.limit)} characters`;
    case 'maxItems':
      return `must contain no more than ${String(p.limit)} elements`;
    case 'minItems':
      return `must contain at least ${String(p.limit)} elements`;
    case 'format':
      return FORMAT_MESSAGES[String(p.format)] ?? `must be in the ${String(p.format)} format`;
    case 'pattern': {
      const custom = (error.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
      return typeof custom === 'string' ? custom : `must match ${String(p.pattern)}`;
    }
    default:
      return error.message ?? 'is invalid';
  }
}

function detail(error: ErrorObject, root: string): ErrorDetail {
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty: string }).missingProperty);
    const parent = fieldName(error.instancePath, '');
    const field = parent ? `${parent}.${missing}` : missing;
    // The one conditional requirement is the local start_time's zone (schema-leniency.ts).
    const when = error.schemaPath.includes('/then/') ? ' when start_time is a local time' : '';
    return { field, message: `${field} is required${when}` };
  }
  const field = fieldName(error.instancePath, root);
  return { field, message: `${field} ${message(error)}` };
}

const under = (error: ErrorObject, parent: ErrorObject) =>
  error !== parent && error.schemaPath.startsWith(`${parent.schemaPath}/`);

/**
 * The failed alternatives of an `anyOf`, as one answer: alternatives that failed only on their
 * type are summed up as "must be X or Y"; otherwise the alternative that came closest (fewest
 * errors, its type right) says what is wrong.
 */
function anyOfDetails(anyOf: ErrorObject, errors: ErrorObject[], root: string): ErrorDetail[] {
  const custom = (anyOf.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  const field = fieldName(anyOf.instancePath, root);
  if (typeof custom === 'string') return [{ field, message: `${field} ${custom}` }];
  const branches = new Map<string, ErrorObject[]>();
  for (const error of errors.filter((e) => under(e, anyOf))) {
    const index = error.schemaPath.slice(anyOf.schemaPath.length + 1).split('/')[0];
    branches.set(index, [...(branches.get(index) ?? []), error]);
  }
  const typeOnly = (list: ErrorObject[]) =>
    list.length === 1 && list[0].keyword === 'type' && list[0].instancePath === anyOf.instancePath;
  const all = [...branches.values()];
  const closer = all.filter((list) => !typeOnly(list));
  if (closer.length === 0) {
    const types = [...new Set(all.map((list) => typeNames(list[0].params.type)))];
    return [{ field, message: `${field} must be ${types.join(' or ')}` }];
  }
  const best = closer.reduce((a, b) => (b.length < a.length ? b : a));
  return describe(best, root);
}

function describe(errors: ErrorObject[], root: string): ErrorDetail[] {
  const anyOfs = errors.filter(
    (e) => e.keyword === 'anyOf' && !errors.some((o) => o.keyword === 'anyOf' && under(e, o)),
  );
  const details = anyOfs.flatMap((anyOf) => anyOfDetails(anyOf, errors, root));
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'if') continue;
    if (anyOfs.some((anyOf) => under(error, anyOf))) continue;
    details.push(detail(error, root));
  }
  return details;
}

/** ajv's errors as docs/api.md#errors details, one per bad field and reason; `root` names the whole value. */
export function validationDetails(errors: ErrorObject[], root: string): ErrorDetail[] {
  const seen = new Set<string>();
  return describe(errors, root).filter((d) => {
    const key = `${d.field}\n${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
