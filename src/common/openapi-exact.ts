import { HttpStatus } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { getSchemaPath } from '@nestjs/swagger';
import type {
  OperationObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorResponse, errorBody } from './error-response';

/**
 * docs/api.md: the published document states what the service refuses, so that a request valid
 * by the document is not refused for an unstated reason. What class-validator enforces but
 * @nestjs/swagger cannot say from the decorators is written into the document here, once,
 * after it is built.
 */

/** Schema keywords a DTO class adds to its own schema (minProperties, …), by class name. */
const SCHEMA_RULES = new Map<string, SchemaObject>();

/**
 * Adds keywords to the class's schema in the document: `@SchemaRules({ minProperties: 1 })`
 * on a body whose fields are each optional but which may not be empty.
 */
export function SchemaRules(rules: SchemaObject): ClassDecorator {
  return (target) => {
    SCHEMA_RULES.set(target.name, { ...SCHEMA_RULES.get(target.name), ...rules });
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

type Schemas = Record<string, SchemaObject>;

function* operationsOf(
  document: OpenAPIObject,
): Generator<{ path: string; operation: OperationObject }> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) yield { path, operation };
    }
  }
}

const refName = (schema: unknown): string | undefined => {
  const ref = (schema as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' ? ref.replace('#/components/schemas/', '') : undefined;
};

/** Walks every schema object under `schema` (properties, items, combinators). */
function walk(schema: unknown, visit: (s: SchemaObject) => void): void {
  if (typeof schema !== 'object' || schema === null) return;
  if (Array.isArray(schema)) {
    for (const s of schema) walk(s, visit);
    return;
  }
  const s = schema as SchemaObject & Record<string, unknown>;
  visit(s);
  for (const [key, value] of Object.entries(s)) {
    if (key === 'example' || key === 'examples' || key === 'enum' || key === 'default') continue;
    if (key === 'properties' && value && typeof value === 'object') {
      for (const sub of Object.values(value)) walk(sub, visit);
    } else if (typeof value === 'object') walk(value, visit);
  }
}

/**
 * OpenAPI 3.0.3: `nullable` does not add null to an `enum`; the enum must list it. Without it a
 * strict validator (or a generated client) refuses the null the service sends.
 */
function nullInNullableEnums(schema: SchemaObject): void {
  if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) {
    schema.enum = [...(schema.enum as unknown[]), null];
  }
}

/**
 * The platform's 64-bit ids are checked as JSON numbers, which hold integers exactly only up to
 * 2^53 - 1: a larger one is refused (400), so the document gives the bound.
 */
function boundInt64(schema: SchemaObject): void {
  if (schema.format === 'int64' && (schema.type === 'integer' || schema.type === 'number')) {
    schema.maximum ??= Number.MAX_SAFE_INTEGER;
    schema.minimum ??= Number.MIN_SAFE_INTEGER;
  }
}

const errorContent = (status: number, message: string) => ({
  'application/json': {
    schema: { $ref: getSchemaPath(ErrorResponse) },
    example: errorBody(status, message),
  },
});

/**
 * Answers any route can give before it runs: the HTTP server's timeout, and the body parsers'
 * own, which read a body whatever the method (one sent with a GET is parsed, and refused, too).
 */
function addTransportAnswers(operation: OperationObject, path: string): void {
  const responses = operation.responses as Record<string, ResponseObject>;
  responses[HttpStatus.BAD_REQUEST] ??= {
    description: 'A body was sent that is not valid JSON, or does not match its Content-Encoding',
    content: errorContent(
      HttpStatus.BAD_REQUEST,
      'Request body is not valid JSON: Unexpected end of JSON input',
    ),
  };
  responses[HttpStatus.REQUEST_TIMEOUT] ??= {
    description: 'The request (headers or body) did not arrive within the server’s timeouts',
    content: errorContent(
      HttpStatus.REQUEST_TIMEOUT,
      'Request was not received in time (headers within 10000 ms, the whole request within 30000 ms)',
    ),
  };
  // The connection reserve serves these routes (http-server.ts); any other is refused there.
  if (!path.startsWith('/health/') && path !== '/zoom/events') {
    responses[HttpStatus.SERVICE_UNAVAILABLE] ??= {
      description:
        'HTTP_MAX_CONNECTIONS connections are open: retry after Retry-After seconds (the ' +
        'connections kept beyond it serve only /health/* and /zoom/events)',
      headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
      content: errorContent(
        HttpStatus.SERVICE_UNAVAILABLE,
        'The server has 1000 connections open, its limit; retry shortly',
      ),
    };
  }
  responses[HttpStatus.PAYLOAD_TOO_LARGE] ??= {
    description: 'The body is larger than 1 MiB',
    content: errorContent(HttpStatus.PAYLOAD_TOO_LARGE, 'Request body is larger than 1 MiB'),
  };
  responses[HttpStatus.UNSUPPORTED_MEDIA_TYPE] ??= path.startsWith('/api/')
    ? {
        description: 'A body was sent that is not JSON (Content-Type is not application/json)',
        content: errorContent(
          HttpStatus.UNSUPPORTED_MEDIA_TYPE,
          'Request body must be JSON: send Content-Type: application/json (got "text/plain")',
        ),
      }
    : {
        description: 'The body’s Content-Encoding is not one the service reads',
        content: errorContent(
          HttpStatus.UNSUPPORTED_MEDIA_TYPE,
          'Content-Encoding zstd is not supported; use gzip, deflate, br or identity',
        ),
      };
}

/**
 * Makes the built document exact (docs/api.md): the bodies of the service's own routes refuse
 * fields they do not list (the validation pipe forbids them), class-level rules are added,
 * nullable enums list null, 64-bit integers carry their bound, public routes say so
 * (`security: []`), and every operation documents the answers the HTTP server and body parsers
 * give before it runs.
 */
export function makeDocumentExact(document: OpenAPIObject): void {
  const schemas = (document.components?.schemas ?? {}) as Schemas;
  for (const { path, operation } of operationsOf(document)) {
    const body = operation.requestBody;
    const content = body && 'content' in body ? body.content : undefined;
    // The service's own bodies are DTO classes ($ref); the passthrough's are the platform's
    // schemas, inline, and forward fields they do not list (docs/api.md#platform-passthrough).
    const name = path.startsWith('/api/')
      ? refName(content?.['application/json']?.schema)
      : undefined;
    if (name && schemas[name]) schemas[name].additionalProperties = false;
    addTransportAnswers(operation, path);
    // A route takes a token exactly when it has RequireScopes, which documents its security:
    // the others (health, the platform's events, the token endpoint) say they are public.
    operation.security ??= [];
    walk(operation.parameters, (s) => boundInt64(s));
    walk(content, (s) => boundInt64(s));
  }
  for (const [name, rules] of SCHEMA_RULES) {
    if (schemas[name]) Object.assign(schemas[name], rules);
  }
  walk(document, nullInNullableEnums);
}

/** Examples that are dates relative to now, by class name and property: their offset in ms. */
const DATED_EXAMPLES = new Map<string, Map<string, number>>();

/**
 * An example date `offsetMs` from the time the document is served (negative: in the past),
 * whole minutes, ISO 8601 UTC: for fields the service bounds by today (a replay's `since` may
 * be at most RETENTION_DAYS old), where any fixed date would one day be refused.
 */
export function DatedExample(offsetMs: number): PropertyDecorator {
  return (target, property) => {
    const name = (target as { constructor: { name: string } }).constructor.name;
    const dated = DATED_EXAMPLES.get(name) ?? new Map<string, number>();
    dated.set(String(property), offsetMs);
    DATED_EXAMPLES.set(name, dated);
  };
}

const MINUTE_MS = 60_000;

/** Sets every dated example to its date as of `now`; run on each serving of the document. */
export function refreshDatedExamples(document: OpenAPIObject, now = Date.now()): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Schemas;
  const base = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  for (const [name, dated] of DATED_EXAMPLES) {
    const properties = schemas[name]?.properties as Record<string, SchemaObject> | undefined;
    if (!properties) continue;
    for (const [property, offsetMs] of dated) {
      if (properties[property]) {
        properties[property].example = new Date(base + offsetMs)
          .toISOString()
          .replace('.000Z', 'Z');
      }
    }
  }
  return document;
}
