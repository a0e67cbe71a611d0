import { Controller, Req, Res, Type } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PathRules } from './path-rules';
import { PlatformOperation, compareRoutes } from './platform-operations';
import { PlatformPassthrough, sendPlatformAnswer } from './platform-passthrough.service';
import { PlatformRoute } from './platform-route.decorator';

/**
 * A controller with one route per platform operation, built from the route table rather than
 * written out 150 times: each handler validates and forwards through PlatformPassthrough,
 * applying `pathRules`, those of the module that mounts it. Routes are registered literal
 * segments first (`/users/summary` before `/users/{userId}`).
 */
export function passthroughController(
  name: string,
  operations: readonly PlatformOperation[],
  pathRules: PathRules,
): Type<{ passthrough: PlatformPassthrough }> {
  @Controller('api')
  class PlatformPassthroughController {
    constructor(readonly passthrough: PlatformPassthrough) {}
  }
  const proto = PlatformPassthroughController.prototype as unknown as Record<string, unknown>;
  for (const op of [...operations].sort(compareRoutes)) {
    async function handler(
      this: PlatformPassthroughController,
      req: Request,
      res: Response,
    ): Promise<void> {
      sendPlatformAnswer(res, await this.passthrough.forward(op, req, pathRules));
    }
    Object.defineProperty(proto, op.id, { value: handler, writable: true, configurable: true });
    Req()(proto, op.id, 0);
    Res()(proto, op.id, 1);
    const descriptor = Object.getOwnPropertyDescriptor(proto, op.id) as PropertyDescriptor;
    PlatformRoute(op, pathRules)(proto, op.id, descriptor);
  }
  // Nest and its logs know controllers by class name; each module mounts its own.
  Object.defineProperty(PlatformPassthroughController, 'name', { value: name });
  return PlatformPassthroughController;
}
