import { HttpStatus } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error';

/** docs/api.md#errors: deeper JSON is refused. No document of the platform or of our API comes close. */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_MESSAGE = `Request body is nested more than ${MAX_JSON_DEPTH} levels deep`;

/**
 * Whether `value` nests objects and arrays more than `max` levels deep (`{}` is one level).
 * Iterative on purpose: JSON.parse builds a value of any depth without recursing, but the
 * validation pipe, class-transformer and JSON.stringify all recurse, and about 1,500 levels
 * (a few KiB of body) exhaust the stack; this must not be one more thing that does.
 */
export function exceedsJsonDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

export const tooDeepError = (): ApiError => new ApiError(HttpStatus.BAD_REQUEST, TOO_DEEP_MESSAGE);

/**
 * Express middleware mounted right after the body parsers: a parsed body deeper than
 * MAX_JSON_DEPTH is a 400 before any pipe, guard or handler walks it. Raw bodies (the
 * platform webhook, a Buffer) are left to their route, which checks after verifying them.
 */
export function limitJsonDepth(req: Request, _res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (typeof body === 'object' && body !== null && !Buffer.isBuffer(body)) {
    if (exceedsJsonDepth(body)) {
      next(tooDeepError());
      return;
    }
  }
  next();
}
