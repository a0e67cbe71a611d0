import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseMailbox } from 'smtp-address-parser';
import {
  JsonSchema,
  PLATFORM_OPERATIONS,
  PlatformOperation,
  PlatformParameter,
} from '../../src/platform-api/platform-operations';
import { exampleOf } from './platform-examples';

/**
 * The platform's side of the contract, for the fake platform: which published operation a
 * request reached, and whether it is valid against that operation's schemas in the platform's
 * document (the committed route table), checked with ajv as the platform would. It shares no
 * code with the service's validator; like the platform, it reads the document's overlapping
 * `oneOf` as `anyOf` and ignores an enum its own type cannot hold, and it refuses query
 * parameters the document does not list (the contract walk sends only documented ones).
 */

export interface ContractCheck {
  operation: string | null;
  violations: string[];
}

interface Compiled {
  op: PlatformOperation;
  segments: string[];
  path: ValidateFunction;
  query: ValidateFunction;
  body?: ValidateFunction;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * An enum whose values name someone by the placeholder `$name` (the participant report's
 * `leave_reason`: "$name left the meeting."), as the platform fills it in: any name there.
 */
function placeholderPattern(values: unknown[]): string | null {
  if (!values.some((v) => typeof v === 'string' && v.includes('$name'))) return null;
  const alternatives = values.map((v) => String(v).split('$name').map(escapeRegExp).join('.+'));
  return `^(?:${alternatives.join('|')})$`;
}

function platformReading(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(platformReading);
  if (schema === null || typeof schema !== 'object') return schema;
  const s = schema as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(s)) {
    const pattern = key === 'enum' ? placeholderPattern(value as unknown[]) : null;
    if (pattern !== null) {
      out.pattern = pattern;
    } else if (key === 'enum' || key === 'default' || key === 'required') {
      const holds = (v: unknown) =>
        s.type === undefined ||
        (s.type === 'string' ? typeof v === 'string' : s.type !== 'integer' || Number.isInteger(v));
      if (key !== 'enum' || (value as unknown[]).every(holds)) out[key] = value;
    } else {
      out[key === 'oneOf' ? 'anyOf' : key] = platformReading(value);
    }
  }
  return out;
}

/**
 * A path id the document types as an integer takes a meeting's or webinar's UUID too, as the
 * platform does (its own examples pass UUIDs there): docs/api.md#the-platforms-spec-errors-we-work-around.
 */
const pathReading = (p: PlatformParameter): unknown =>
  p.in === 'path' && p.schema.type === 'integer'
    ? { anyOf: [{ type: 'integer' }, { type: 'string', minLength: 1 }] }
    : platformReading(p.schema);

const objectSchema = (params: PlatformParameter[]) => ({
  type: 'object',
  properties: Object.fromEntries(params.map((p) => [p.name, pathReading(p)])),
  required: params.filter((p) => p.required).map((p) => p.name),
});

/** A path segment as the platform reads it: decoded once, or twice when double-encoded. */
function decodeSegment(raw: string): string {
  const once = decodeURIComponent(raw);
  if (!/%[0-9A-Fa-f]{2}/.test(once)) return once;
  try {
    return decodeURIComponent(once);
  } catch {
    // A `%` that was the value's own, encoded once: `%A6` is no UTF-8 on its own.
    return once;
  }
}

export class PlatformContract {
  private readonly compiled: Compiled[];
  private readonly strict: Ajv;
  /** Answer schemas, compiled when first asked for: some the document gets wrong are never used. */
  private readonly answers = new Map<string, ValidateFunction>();

  constructor(operations: readonly PlatformOperation[] = PLATFORM_OPERATIONS) {
    const coercing = new Ajv({ allErrors: true, strict: false, coerceTypes: true });
    const strict = new Ajv({ allErrors: true, strict: false });
    for (const ajv of [coercing, strict]) {
      addFormats(ajv);
      for (const name of ['password', 'binary', 'Hex color code']) ajv.addFormat(name, true);
      // RFC 5321, as JSON Schema's `email` is (ajv-formats' own is a narrower practical one),
      // by a parser of the RFC's grammar rather than the service's code.
      ajv.addFormat('email', (text: string) => {
        try {
          parseMailbox(text);
          return /^[\x20-\x7e]+$/.test(text);
        } catch {
          return false;
        }
      });
    }
    this.compiled = operations.map((op) => ({
      op,
      segments: op.path.split('/').slice(1),
      path: coercing.compile(objectSchema(op.parameters.filter((p) => p.in === 'path'))),
      query: coercing.compile(objectSchema(op.parameters.filter((p) => p.in === 'query'))),
      body:
        op.body?.contentType === 'application/json'
          ? strict.compile(platformReading(op.body.schema) as object)
          : undefined,
    }));
    this.strict = strict;
  }

  /** The operation a request reached: the template with the most literal segments matching. */
  private match(method: string, segments: string[]): Compiled | undefined {
    let best: Compiled | undefined;
    let bestLiterals = -1;
    for (const c of this.compiled) {
      if (c.op.method !== method || c.segments.length !== segments.length) continue;
      let literals = 0;
      const fits = c.segments.every((s, i) => {
        if (s.startsWith('{')) return segments[i] !== '';
        literals++;
        return s === segments[i];
      });
      if (fits && literals > bestLiterals) [best, bestLiterals] = [c, literals];
    }
    return best;
  }

  check(
    method: string,
    apiPath: string,
    query: URLSearchParams,
    contentType: string | undefined,
    body: string,
  ): ContractCheck {
    const raw = apiPath.split('/').slice(1);
    const c = this.match(method, raw);
    if (!c) return { operation: null, violations: [`no published operation ${method} ${apiPath}`] };
    const violations: string[] = [];
    const errors = (what: string, validate: ValidateFunction) =>
      (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message ?? e.keyword}`);

    const params = Object.fromEntries(
      c.segments.flatMap((s, i) =>
        s.startsWith('{') ? [[s.slice(1, -1), decodeSegment(raw[i])]] : [],
      ),
    );
    if (!c.path(params)) violations.push(...errors('path', c.path));

    const documented = new Set(c.op.parameters.filter((p) => p.in === 'query').map((p) => p.name));
    const values: Record<string, string> = {};
    for (const [name, value] of query) {
      if (!documented.has(name)) violations.push(`query parameter ${name} is not documented`);
      else values[name] = value;
    }
    if (!c.query(values)) violations.push(...errors('query', c.query));

    violations.push(...this.bodyViolations(c, contentType, body));
    return { operation: c.op.id, violations };
  }

  private bodyViolations(c: Compiled, contentType: string | undefined, body: string): string[] {
    const spec = c.op.body;
    if (!spec) return body === '' ? [] : ['a body was sent to an operation that takes none'];
    if (body === '') {
      const parts =
        spec.contentType === 'multipart/form-data' && Array.isArray(spec.schema.required);
      return spec.required || parts ? ['the required body is missing'] : [];
    }
    const type = (contentType ?? '').split(';')[0].trim();
    if (type !== spec.contentType) return [`content-type ${type} instead of ${spec.contentType}`];
    if (!c.body) {
      const required = (spec.schema.required ?? []) as string[];
      return required
        .filter(
          (name) =>
            !new RegExp(`content-disposition:[^\\r\\n]*;\\s*name="${name}"`, 'i').test(body),
        )
        .map((name) => `multipart part ${name} is missing`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return ['the body is not JSON'];
    }
    return c.body(parsed)
      ? []
      : (c.body.errors ?? []).map((e) => `body${e.instancePath} ${e.message ?? e.keyword}`);
  }

  /**
   * What is wrong with an answer of the operation `operationId`: a status the document does not
   * list as a success, or a body its schema for that status refuses (as the platform reads it).
   */
  answerViolations(operationId: string, status: number, body: unknown): string[] {
    const op = this.compiled.find((c) => c.op.id === operationId)?.op;
    if (!op) return [`no published operation ${operationId}`];
    const answer = op.responses[String(status)];
    if (!answer) return [`status ${status} is not documented`];
    if (answer.contentType !== 'application/json' || !answer.schema) return [];
    const key = `${operationId} ${status}`;
    const validate =
      this.answers.get(key) ?? this.strict.compile(platformReading(answer.schema) as object);
    this.answers.set(key, validate);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `answer${e.instancePath} ${e.message ?? e.keyword}`);
  }

  /** The operation's first documented 2xx status. */
  static successStatus(op: PlatformOperation): number {
    return Number(Object.keys(op.responses)[0] ?? 200);
  }

  /**
   * The platform's answer to a valid call, in the shape its document gives: the first 2xx
   * status, with a body built from that answer's schema, or none where the document lists none.
   */
  static successAnswer(op: PlatformOperation): { status: number; body?: unknown } {
    const status = PlatformContract.successStatus(op);
    const answer = op.responses[String(status)];
    return answer?.contentType ? { status, body: exampleOf(answer.schema ?? {}) } : { status };
  }
}
