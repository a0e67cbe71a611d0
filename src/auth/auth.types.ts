import { Scope } from '../config/config.types';

/** The API client a bearer token was issued to; attached to the request by BearerGuard. */
export interface AuthenticatedClient {
  clientId: string;
  scopes: Scope[];
  /** The token came from a portal link (docs/console.md), not from the client's own credentials. */
  portal?: true;
}

export const SCOPES_KEY = 'meb:scopes';
/** Routes that take any one of several scopes (RequireAnyScope). */
export const ANY_SCOPES_KEY = 'meb:any-scopes';
