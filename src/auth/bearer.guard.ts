import { CanActivate, ExecutionContext, HttpStatus, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from '../common/api-error';
import { Scope } from '../config/config.types';
import { AuthenticatedClient, SCOPES_KEY } from './auth.types';
import { TokenService } from './token.service';

/** 401 for a token that does not verify, 403 for a valid token without the route's scopes. */
@Injectable()
export class BearerGuard implements CanActivate {
  constructor(
    private readonly tokens: TokenService,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request & { client?: AuthenticatedClient }>();
    const header = request.headers.authorization ?? '';
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
    if (!match) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'A bearer token is required', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    const client = this.tokens.verify(match[1]);
    if (!client) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'The bearer token is invalid or expired', {
        headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
      });
    }
    const required =
      this.reflector.getAllAndOverride<Scope[]>(SCOPES_KEY, [
        context.getHandler(),
        context.getClass(),
      ]) ?? [];
    const missing = required.filter((scope) => !client.scopes.includes(scope));
    if (missing.length > 0) {
      throw new ApiError(HttpStatus.FORBIDDEN, `The token lacks scope ${missing.join(', ')}`, {
        headers: {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${required.join(' ')}"`,
        },
      });
    }
    request.client = client;
    return true;
  }
}
