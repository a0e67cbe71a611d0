import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { ApiClientConfig, SCOPES, Scope } from '../config/config.types';
import { ApiClientsService } from './api-clients.service';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { basicCredentials } from './basic-credentials';
import { TokenService } from './token.service';

/** What a request offers to authenticate an API client. */
export interface CredentialsRequest {
  authorization: string | undefined;
  /** The parsed body, whose `client_id` and `client_secret` count when there is no Basic header. */
  form?: unknown;
  ip: string;
}

export type Authentication =
  | { client: ApiClientConfig }
  /** missing: the request names no id and secret; rejected: they do not verify. */
  | { client: null; failure: 'missing' | 'rejected' };

export interface TokenGrant {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  scope: string;
}

/** The 403/400 message for a verified client that does not hold every scope of `missing`. */
export const clientLacksScopes = (clientId: string, missing: readonly string[]): string =>
  `Client "${clientId}" lacks ${missing.length > 1 ? 'scopes' : 'scope'} ${missing.join(', ')}`;

const TOKEN_CHALLENGE = 'Basic realm="meeting-event-bridge"';

const oauthError = (status: HttpStatus, code: string, description: string, challenge = false) =>
  new ApiError(status, description, {
    oauthError: code,
    headers: challenge ? { 'www-authenticate': TOKEN_CHALLENGE } : {},
  });

/**
 * The OAuth 2.0 client-credentials grant (RFC 6749 §4.4) of POST /oauth/token, and the client
 * authentication it shares with the queue dashboard's Basic login: credentials from HTTP
 * Basic or the form body, verified in constant time under the failure limit.
 */
@Injectable()
export class ClientCredentialsService {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly tokens: TokenService,
    private readonly failures: AuthFailureLimiter,
  ) {}

  /**
   * The client whose id and secret the request presents. Throws 429 while the caller is
   * blocked. Only a presented secret that does not verify counts as a failure: a request
   * without credentials guessed nothing (a browser asks without them first).
   */
  authenticate(request: CredentialsRequest): Authentication {
    const candidates =
      basicCredentials(request.authorization) ?? formCredentials(asForm(request.form));
    if (!candidates) return { client: null, failure: 'missing' };
    const clientId = candidates[0][0];
    // Checked before the secret, so that a blocked caller learns nothing, not even whether
    // its next guess would have been right.
    this.failures.assertMayTry(clientId, request.ip);
    const client = this.clients.verifyAny(candidates);
    if (!client) {
      this.failures.recordFailure(clientId, request.ip);
      return { client: null, failure: 'rejected' };
    }
    return { client };
  }

  /** Issues a token for the grant the request asks; errors in the RFC 6749 §5.2 shape. */
  grant(request: CredentialsRequest): TokenGrant {
    const form = asForm(request.form);
    const grantType = field(form, 'grant_type');
    if (!grantType) {
      throw oauthError(HttpStatus.BAD_REQUEST, 'invalid_request', 'grant_type is required');
    }
    if (grantType !== 'client_credentials') {
      throw oauthError(
        HttpStatus.BAD_REQUEST,
        'unsupported_grant_type',
        'Only grant_type=client_credentials is supported',
      );
    }
    const authentication = this.authenticate(request);
    if (!authentication.client) {
      throw oauthError(
        HttpStatus.UNAUTHORIZED,
        'invalid_client',
        authentication.failure === 'missing'
          ? 'Client credentials are required'
          : 'Client authentication failed',
        true,
      );
    }
    const { client } = authentication;
    const scopes = narrowScopes(client, field(form, 'scope'));
    const { token, expiresIn } = this.tokens.issue(client.clientId, scopes);
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      scope: scopes.join(' '),
    };
  }
}

const asForm = (body: unknown): Record<string, unknown> =>
  typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};

const field = (form: Record<string, unknown>, name: string): string | undefined =>
  typeof form[name] === 'string' ? form[name] : undefined;

function formCredentials(form: Record<string, unknown>): [string, string][] | null {
  const clientId = field(form, 'client_id');
  const clientSecret = field(form, 'client_secret');
  return clientId && clientSecret !== undefined ? [[clientId, clientSecret]] : null;
}

/**
 * The client's scopes, or the space-separated subset `requested` names. 400 invalid_scope
 * naming each scope that does not exist, else each the client does not hold.
 */
function narrowScopes(client: ApiClientConfig, requested: string | undefined): Scope[] {
  const names = [...new Set(requested?.split(/\s+/).filter(Boolean))];
  if (names.length === 0) return client.scopes;
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw oauthError(
      HttpStatus.BAD_REQUEST,
      'invalid_scope',
      `${unknown.length > 1 ? `Scopes ${quoted(unknown)} do` : `Scope ${quoted(unknown)} does`} ` +
        `not exist; the scopes are ${SCOPES.join(', ')}`,
    );
  }
  const lacking = names.filter((name) => !client.scopes.includes(name as Scope));
  if (lacking.length > 0) {
    throw oauthError(
      HttpStatus.BAD_REQUEST,
      'invalid_scope',
      clientLacksScopes(client.clientId, lacking),
    );
  }
  return names as Scope[];
}

/** Names the caller sent, echoed safely: quoted, each cut to 40 characters, at most five. */
function quoted(names: string[]): string {
  const shown = names
    .slice(0, 5)
    .map((name) => JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name));
  return names.length > shown.length
    ? `${shown.join(', ')} and ${names.length - 5} more`
    : shown.join(', ');
}
