import { HttpStatus, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiClientsService } from '../auth/api-clients.service';
import { AuthFailureLimiter } from '../auth/auth-failure-limiter';
import { AuthenticatedClient } from '../auth/auth.types';
import { basicCredentials } from '../auth/basic-credentials';
import { authenticateBearer, requireScopes } from '../auth/bearer.guard';
import { TokenService } from '../auth/token.service';
import { ApiError } from '../common/api-error';

export const QUEUE_DASHBOARD_SCOPE = 'queues:admin';

// Browsers prompt for Basic credentials only when the challenge names that scheme.
const CHALLENGE = 'Basic realm="meeting-event-bridge queues", charset="UTF-8"';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Guards the queue dashboard. A browser opening the page cannot attach a bearer token, so
 * besides `Authorization: Bearer` this takes the client's own id and secret as HTTP Basic
 * (checked in constant time, under the token endpoint's failure limit). Either way the client
 * needs the `queues:admin` scope.
 */
@Injectable()
export class QueueDashboardAuthMiddleware implements NestMiddleware {
  constructor(
    private readonly tokens: TokenService,
    private readonly clients: ApiClientsService,
    private readonly failures: AuthFailureLimiter,
  ) {}

  use(req: Request, _res: Response, next: NextFunction): void {
    const header = req.headers.authorization;
    const client = /^Bearer /i.test(header ?? '')
      ? authenticateBearer(this.tokens, header)
      : this.authenticateBasic(header, req.ip ?? '');
    requireScopes(client, [QUEUE_DASHBOARD_SCOPE]);
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

  private authenticateBasic(header: string | undefined, ip: string): AuthenticatedClient {
    const candidates = basicCredentials(header);
    if (!candidates) {
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'Client credentials or a bearer token required', {
        headers: { 'www-authenticate': CHALLENGE },
      });
    }
    const attemptKey = `${candidates[0][0]}\n${ip}`;
    this.failures.assertMayTry(attemptKey);
    const client = this.clients.verifyAny(candidates);
    if (!client) {
      this.failures.recordFailure(attemptKey);
      throw new ApiError(HttpStatus.UNAUTHORIZED, 'Client authentication failed', {
        headers: { 'www-authenticate': CHALLENGE },
      });
    }
    return { clientId: client.clientId, scopes: client.scopes };
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
