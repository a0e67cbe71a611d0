import { Scope } from '../config/config.types';
import table from './operations.json';

/** A JSON Schema (OpenAPI 3.0 dialect) as the platform's document writes it. */
export type JsonSchema = { [keyword: string]: unknown };

export type PlatformDomain = 'meetings' | 'webinars' | 'users' | 'recordings' | 'reports';

export interface PlatformParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

/** A success answer: its first sentence, and its content type and schema when it has a body. */
export interface PlatformAnswer {
  description: string;
  contentType?: string;
  schema?: JsonSchema;
}

export interface PlatformOperation {
  /** The document's operationId. */
  id: string;
  /** The document's group (first tag) and the scope domain it maps to (docs/api.md#platform-passthrough). */
  group: string;
  domain: PlatformDomain;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI path template relative to the REST base (`…/v2`). */
  path: string;
  summary: string;
  parameters: PlatformParameter[];
  body?: { contentType: string; required: boolean; schema: JsonSchema };
  /** The 2xx statuses the document lists, as it documents them. */
  responses: Record<string, PlatformAnswer>;
}

/**
 * The platform operations this service serves, generated from the platform's published
 * OpenAPI document by scripts/extract-platform-operations.ts (never edited by hand).
 */
export const PLATFORM_OPERATIONS = table.operations as unknown as readonly PlatformOperation[];

export const PLATFORM_DOCUMENT = {
  source: table.source,
  sha256: table.sha256,
  title: table.title,
  version: table.version,
};

const BY_ID = new Map(PLATFORM_OPERATIONS.map((op) => [op.id, op]));

export function platformOperation(id: string): PlatformOperation {
  const op = BY_ID.get(id);
  if (!op) throw new Error(`platform operation ${id} is not in the route table`);
  return op;
}

/** docs/api.md#platform-passthrough: `<domain>:read` for GET, `<domain>:write` for every other method. */
export function scopeOf(op: PlatformOperation): Scope {
  return `${op.domain}:${op.method === 'GET' ? 'read' : 'write'}` as Scope;
}

/** The Express route of an operation: `/users/{userId}/meetings` → `/users/:userId/meetings`. */
export function expressPath(op: Pick<PlatformOperation, 'path'>): string {
  return op.path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Express tries routes in the order they are registered, so a literal segment must come before a
 * parameter in the same place (`/users/summary` before `/users/{userId}`), or the parameter would
 * swallow it. Compares segment by segment: literal before parameter, then alphabetical.
 */
export function compareRoutes(a: PlatformOperation, b: PlatformOperation): number {
  const sa = a.path.split('/');
  const sb = b.path.split('/');
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i].startsWith('{');
    const pb = sb[i].startsWith('{');
    if (pa !== pb) return pa ? 1 : -1;
    if (!pa && sa[i] !== sb[i]) return sa[i] < sb[i] ? -1 : 1;
  }
  return sa.length - sb.length || a.method.localeCompare(b.method);
}

const MULTIPART_ROUTES = PLATFORM_OPERATIONS.filter(
  (op) => op.body?.contentType === 'multipart/form-data',
).map((op) => ({
  method: op.method,
  pattern: new RegExp(`^/api${op.path.replace(/\{\w+\}/g, '[^/]+')}/?$`),
}));

/**
 * Whether a request is one of the platform's multipart uploads (a user's picture, a virtual
 * background), which the passthrough reads itself: every other /api body must be JSON.
 */
export function isMultipartUpload(method: string, url: string): boolean {
  const path = url.split('?')[0];
  return MULTIPART_ROUTES.some((route) => route.method === method && route.pattern.test(path));
}
