import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { authenticateBearer, requireScopes } from '../auth/bearer.guard';
import { ClientCredentialsService, clientLacksScopes } from '../auth/client-credentials.service';
import { TokenService } from '../auth/token.service';
import { ApiError } from '../common/api-error';
import { Scope } from '../config/config.types';

export const QUEUE_DASHBOARD_SCOPE: Scope = 'queues:admin';

// Browsers prompt for Basic credentials only when the challenge names that scheme.
const CHALLENGE = 'Basic realm="meeting-event-bridge queues", charset="UTF-8"';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Guards the queue dashboard. A browser opening the page cannot attach a bearer token, so
 * besides `Authorization: Bearer` this takes the client's own id and secret as HTTP Basic
 * (checked like the token endpoint's, under its failure limit). Either way the client needs
 * the `queues:admin` scope.
 */
@Injectable()
export class QueueDashboardAuthMiddleware implements NestMiddleware {
  constructor(
    private readonly tokens: TokenService,
    private readonly credentials: ClientCredentialsService,
  ) {}

  use(req: Request, _res: Response, next: NextFunction): void {
    const header = req.headers.authorization;
    if (/^Bearer /i.test(header ?? '')) {
      requireScopes(authenticateBearer(this.tokens, header), [QUEUE_DASHBOARD_SCOPE]);
    } else {
      this.authenticateBasic(header, req.ip ?? '');
    }
    // The browser resends cached Basic credentials on requests other sites start, so a
    // state-changing call (retry, clean, pause) must come from the dashboard's own origin.
    if (!SAFE_METHODS.has(req.method) && !sameOrigin(req)) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        'Queue dashboard changes must come from the dashboard itself (cross-origin request)',
      );
    }
    next();
  }

  private authenticateBasic(authorization: string | undefined, ip: string): void {
    const authentication = this.credentials.authenticate({ authorization, ip });
    if (!authentication.client) {
      throw new ApiError(
        HttpStatus.UNAUTHORIZED,
        authentication.failure === 'missing'
          ? 'Client credentials or a bearer token required'
          : 'Client authentication failed',
        { headers: { 'www-authenticate': CHALLENGE } },
      );
    }
    const { clientId, scopes } = authentication.client;
    if (!scopes.includes(QUEUE_DASHBOARD_SCOPE)) {
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        clientLacksScopes(clientId, [QUEUE_DASHBOARD_SCOPE]),
      );
    }
  }
}

/** True when the browser says the request comes from this host (or says nothing: not a browser). */
function sameOrigin(req: Request): boolean {
  const fetchSite = req.headers['sec-fetch-site'];
  if (fetchSite !== undefined) return fetchSite === 'same-origin' || fetchSite === 'none';
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}
