import {
  ExecutionContext,
  SetMetadata,
  UseGuards,
  applyDecorators,
  createParamDecorator,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOAuth2 } from '@nestjs/swagger';
import type { Request } from 'express';
import { Scope } from '../config/config.types';
import { ApiErrorResponse } from '../common/error-response';
import { ANY_SCOPES_KEY, AuthenticatedClient, SCOPES_KEY } from './auth.types';
import { BearerGuard } from './bearer.guard';

/**
 * Protects a route with a bearer token carrying every one of `scopes`, and documents it.
 * Every /api route uses this; test/auth.e2e-spec.ts checks none is left open.
 */
export function RequireScopes(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(SCOPES_KEY, scopes),
    UseGuards(BearerGuard),
    ApiOAuth2(scopes, 'oauth2'),
    ApiBearerAuth('bearer'),
    ApiErrorResponse(401, {
      description: 'Missing, malformed, expired or forged token',
      example: { message: 'The bearer token is invalid or expired' },
    }),
    ApiErrorResponse(403, {
      description: `Token lacks scope ${scopes.join(', ')}`,
      example: { message: `The token lacks scope ${scopes.join(', ')}` },
    }),
  );
}

/**
 * Protects a route with a bearer token carrying at least one of `scopes` (the document lists
 * them all; the description says any one will do), and documents it like RequireScopes.
 */
export function RequireAnyScope(...scopes: Scope[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    SetMetadata(ANY_SCOPES_KEY, scopes),
    UseGuards(BearerGuard),
    ApiOAuth2(scopes, 'oauth2'),
    ApiBearerAuth('bearer'),
    ApiErrorResponse(401, {
      description: 'Missing, malformed, expired or forged token',
      example: { message: 'The bearer token is invalid or expired' },
    }),
    ApiErrorResponse(403, {
      description: `Token lacks every one of ${scopes.join(', ')}`,
      example: { message: `The token lacks scope ${scopes.join(', ')}` },
    }),
  );
}

export const CurrentClient = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): AuthenticatedClient =>
    ctx.switchToHttp().getRequest<Request & { client: AuthenticatedClient }>().client,
);
