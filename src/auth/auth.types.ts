import { Scope } from '../config/config.types';

/** The API client a bearer token was issued to; attached to the request by BearerGuard. */
export interface AuthenticatedClient {
  clientId: string;
  scopes: Scope[];
}

export const SCOPES_KEY = 'meb:scopes';
