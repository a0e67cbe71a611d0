import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApiError } from '../common/api-error';
import { ErrorDetail } from '../common/error-response';
import { isMailbox } from './formats';
import { PathRules } from './path-rules';
import {
  JsonSchema,
  PLATFORM_OPERATIONS,
  PlatformOperation,
  PlatformParameter,
} from './platform-operations';
import {
  START_TIME_FORMAT,
  isBodyRequired,
  isRealDateTime,
  lenientBodySchema,
  lenientPathSchema,
  lenientSchema,
} from './schema-leniency';
import { validationDetails } from './validation-details';

/** A request to a platform operation, as it arrived here. */
export interface PlatformRequest {
  /** Path parameters, decoded once (as Express gives them). */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body (undefined when none came), or a multipart one's parts by name. */
  body?: unknown;
}

interface CompiledOperation {
  path: ValidateFunction;
  query: ValidateFunction;
  /** The documented query parameters, and those typed as arrays (they may be repeated). */
  documented: Set<string>;
  arrays: Set<string>;
  /** A JSON body's validator, or a multipart body's (its parts' text converted as query text is). */
  body?: ValidateFunction;
}

function newAjv(coerceTypes: boolean): Ajv {
  // strict off: the document carries OpenAPI keywords (nullable, deprecated, x-…) and formats
  // of its own; verbose: messages read the failing schema (x-message). Unoptimised code
  // compiles faster and validates as fast at these sizes (docs/benchmarks.md).
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    verbose: true,
    coerceTypes,
    code: { optimize: false },
  });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('email', isMailbox);
  ajv.addFormat(START_TIME_FORMAT, isRealDateTime);
  // Formats the document names but does not define: documentation only.
  for (const name of ['password', 'binary', 'Hex color code']) ajv.addFormat(name, true);
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  return ajv;
}

const objectOf = (params: PlatformParameter[], schemaOf: (p: PlatformParameter) => JsonSchema) => ({
  type: 'object',
  properties: Object.fromEntries(params.map((p) => [p.name, schemaOf(p)])),
  required: params.filter((p) => p.required).map((p) => p.name),
});

/**
 * Path values that would not stay one segment of the platform's path, whatever the parameter;
 * then the rule of the module that mounts the operation, if it has one for the parameter.
 */
function pathProblem(rules: PathRules, name: string, value: string): string | null {
  if (value === '' || value.split('/').some((s) => s === '.' || s === '..')) {
    return `${name} must not be empty, "." or ".."`;
  }
  return rules[name]?.problem?.(name, value) ?? null;
}

/**
 * Validates requests to platform operations against each operation's own schemas from the
 * platform's document (docs/api.md#platform-passthrough): path and query parameters (query text converted to the
 * documented type first) and the JSON body. Fields the document does not describe are not
 * checked, so they reach the platform unchanged. An operation's validators are compiled on its
 * first request: compiling them all at start cost time and memory that a process serving a
 * few of them (or none: a worker) never needed (docs/benchmarks.md). The unit specs compile every
 * operation, so a schema that does not compile fails CI, not a request.
 */
export class PlatformRequestValidator {
  private readonly compiled = new Map<string, CompiledOperation>();
  private readonly params = newAjv(true);
  private readonly bodies = newAjv(false);
  private readonly operations: ReadonlyMap<string, PlatformOperation>;

  constructor(operations: readonly PlatformOperation[] = PLATFORM_OPERATIONS) {
    this.operations = new Map(operations.map((op) => [op.id, op]));
  }

  /** Compiles every operation's validators now (the specs' check that all of them compile). */
  compileAll(): number {
    for (const op of this.operations.values()) this.compiledFor(op);
    return this.compiled.size;
  }

  private compiledFor(op: PlatformOperation): CompiledOperation {
    const known = this.compiled.get(op.id);
    if (known) return known;
    if (this.operations.get(op.id) !== op) {
      throw new Error(`platform operation ${op.id} is not one this validator serves`);
    }
    const query = op.parameters.filter((p) => p.in === 'query');

    const compiled: CompiledOperation = {
      path: this.params.compile(
        objectOf(
          op.parameters.filter((p) => p.in === 'path'),
          lenientPathSchema,
        ),
      ),
      query: this.params.compile(objectOf(query, (p) => lenientSchema(p.schema))),
      documented: new Set(query.map((p) => p.name)),
      arrays: new Set(query.filter((p) => p.schema.type === 'array').map((p) => p.name)),
      body:
        op.body &&
        (op.body.contentType === 'application/json'
          ? this.bodies.compile(lenientBodySchema(op.body.schema, op.method))
          : this.params.compile(lenientSchema(op.body.schema))),
    };
    this.compiled.set(op.id, compiled);
    return compiled;
  }

  /**
   * Throws a 400 naming every bad parameter and field. `pathRules` are those of the module that
   * mounts the operation; `localQuery` names query parameters this service handles itself (not
   * the platform's), which the caller checks.
   */
  validate(
    op: PlatformOperation,
    req: PlatformRequest,
    pathRules: PathRules,
    localQuery: readonly string[] = [],
  ): void {
    const compiled = this.compiledFor(op);
    const details: ErrorDetail[] = [];
    const refused = new Set<string>();
    for (const [name, value] of Object.entries(req.params)) {
      const problem = pathProblem(pathRules, name, value);
      if (problem) {
        refused.add(name);
        details.push({ field: name, message: problem });
      }
    }
    const pathDetails = compiled.path({ ...req.params })
      ? []
      : validationDetails(compiled.path.errors ?? [], 'path').filter((d) => !refused.has(d.field));
    // concat, not push(...): a body breaking a rule per item gives more details than a call
    // can take as arguments.
    const all = details.concat(
      pathDetails,
      this.queryDetails(compiled, req.query, localQuery),
      this.bodyDetails(op, compiled, req.body),
    );
    if (all.length > 0) throw ApiError.validation(all);
  }

  private queryDetails(
    compiled: CompiledOperation,
    query: URLSearchParams,
    localQuery: readonly string[],
  ): ErrorDetail[] {
    const details: ErrorDetail[] = [];
    const values: Record<string, unknown> = {};
    for (const name of new Set(query.keys())) {
      if (localQuery.includes(name) || !compiled.documented.has(name)) continue;
      const all = query.getAll(name);
      if (compiled.arrays.has(name)) values[name] = all;
      else if (all.length === 1) values[name] = all[0];
      else details.push({ field: name, message: `${name} must be given once` });
    }
    if (!compiled.query(values)) {
      return details.concat(validationDetails(compiled.query.errors ?? [], 'query'));
    }
    return details;
  }

  private bodyDetails(
    op: PlatformOperation,
    compiled: CompiledOperation,
    body: unknown,
  ): ErrorDetail[] {
    if (!op.body) return [];
    if (body === undefined) {
      return isBodyRequired(op.body)
        ? [{ field: 'body', message: `body is required (${op.body.contentType})` }]
        : [];
    }
    if (!compiled.body || compiled.body(body)) return [];
    const details = validationDetails(compiled.body.errors ?? [], 'body');
    if (op.body.contentType === 'application/json') return details;
    return details.map((d) =>
      d.message.endsWith(' is required')
        ? { ...d, message: `${d.message} (a multipart/form-data part)` }
        : d,
    );
  }
}
