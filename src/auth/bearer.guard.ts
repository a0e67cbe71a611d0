import { CanActivate, ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from '../common/api-error';
import { Scope } from '../config/config.types';
import { ANY_SCOPES_KEY, AuthenticatedClient, SCOPES_KEY } from './auth.types';
import { TokenService } from './token.service';

const BEARER = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i;

/** The client of a valid bearer token; 401 when the header is missing, malformed or forged. */
export function authenticateBearer(
  tokens: TokenService,
  header: string | undefined,
): AuthenticatedClient {
  const match = BEARER.exec(header ?? '');
  if (!match) {
    throw new ApiError(HttpStatus.UNAUTHORIZED, 'A bearer token is required', {
      headers: { 'www-authenticate': 'Bearer' },
    });
  }
  const client = tokens.verify(match[1]);
  if (!client) {
    throw new ApiError(HttpStatus.UNAUTHORIZED, 'The bearer token is invalid or expired', {
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
  }
  return client;
}

/** 403 naming the scopes of `required` that `client` lacks. */
export function requireScopes(client: AuthenticatedClient, required: readonly Scope[]): void {
  const missing = required.filter((scope) => !client.scopes.includes(scope));
  if (missing.length > 0) {
    throw new ApiError(HttpStatus.FORBIDDEN, `The token lacks scope ${missing.join(', ')}`, {
      headers: {
        'www-authenticate': `Bearer error="insufficient_scope", scope="${required.join(' ')}"`,
      },
    });
  }
}

/** 401 for a token that does not verify, 403 for a valid token without the route's scopes. */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly tokens: TokenService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request & { client?: AuthenticatedClient }>();
    const client = authenticateBearer(this.tokens, request.headers.authorization);
    const targets = [context.getHandler(), context.getClass()];
    requireScopes(client, this.reflector.getAllAndOverride<Scope[]>(SCOPES_KEY, targets) ?? []);
    const any = this.reflector.getAllAndOverride<Scope[]>(ANY_SCOPES_KEY, targets);
    if (any && !any.some((scope) => client.scopes.includes(scope))) {
      throw new ApiError(HttpStatus.FORBIDDEN, `The token lacks scope ${any.join(', ')}`, {
        headers: {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${any.join(' ')}"`,
        },
      });
    }
    request.client = client;
    return true;
  }
}
