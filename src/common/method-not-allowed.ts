import { HttpStatus, NotFoundException } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from './api-error';

/** What Express's router (v5) keeps of each route: enough to ask which methods a path has. */
interface RouterLayer {
  route?: { path: string; _methods(includeAll?: boolean): string[] };
  match(path: string): unknown;
}

/** A route's template with its parameters unnamed: `/meetings/:meetingId` → `/meetings/:`. */
const shapeOf = (template: string) => template.replace(/:\w+/g, ':');

/**
 * The methods the app serves `path` with (HEAD beside GET), from the router's own routes: those
 * of the first template that matches it, as the document lists them. Routes are registered
 * literal segments first, so `/api/users/summary` is that template's, not `/api/users/:userId`'s.
 */
export function allowedMethods(req: Request, path = req.path): string[] {
  const router = (req.app as unknown as { router?: { stack: RouterLayer[] } }).router;
  const methods = new Set<string>();
  let shape: string | undefined;
  for (const layer of router?.stack ?? []) {
    if (!layer.route || !layer.match(path)) continue;
    shape ??= shapeOf(layer.route.path);
    if (shapeOf(layer.route.path) !== shape) continue;
    for (const method of layer.route._methods(false)) methods.add(method);
  }
  return [...methods].sort();
}

/**
 * docs/api.md: a method a path does not serve is 405 with `Allow`, not 404. Nest answers every
 * request no route took with a NotFoundException from its last handler; such a request (no
 * route of its own: `req.route` unset) to a path that other methods serve becomes a 405. A 404
 * a route handler throws (a webhook that is not yours) stays a 404.
 */
export function methodNotAllowed(exception: unknown, req: Request | undefined): unknown {
  if (!(exception instanceof NotFoundException) || !req || req.route !== undefined) {
    return exception;
  }
  const allowed = allowedMethods(req);
  if (allowed.length === 0) return exception;
  return new ApiError(
    HttpStatus.METHOD_NOT_ALLOWED,
    `${req.method} is not served on ${req.path}; use ${allowed.join(', ')}`,
    { headers: { Allow: allowed.join(', ') } },
  );
}
