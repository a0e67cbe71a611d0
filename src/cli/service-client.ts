import createClient, { Client } from 'openapi-fetch';
import { CliError, EXIT, exitCodeOf } from './exit-codes';
import type { components, paths } from './generated/api';

export type Schemas = components['schemas'];

/**
 * docs/operations.md's event lookup, for as long as the served document this client was generated from
 * lacks it: once `/api/events` is in the document (`npm run client:generate`), the generated
 * types are used instead and this goes unused.
 */
export interface EventLookupPaths {
  '/api/events': {
    get: {
      parameters: {
        query?: {
          tracking_id?: string;
          event?: string;
          since?: string;
          until?: string;
          limit?: number;
          cursor?: string;
        };
      };
      responses: {
        200: {
          content: { 'application/json': { data: EventSummary[]; next_cursor: string | null } };
        };
      };
    };
  };
  '/api/events/{id}': {
    get: {
      parameters: { path: { id: string } };
      responses: { 200: { content: { 'application/json': EventSummary } } };
    };
  };
}

export interface EventSummary {
  id: string;
  event: string;
  created_at: string;
  data?: unknown;
  source?: Record<string, unknown> | null;
  deliveries?: {
    id: string;
    webhook_id: string;
    status: string;
    attempt_count: number;
    last_status_code: number | null;
    completed_at: string | null;
  }[];
}

export type ServicePaths = paths & ('/api/events' extends keyof paths ? unknown : EventLookupPaths);

export type ServiceClient = Client<ServicePaths>;

/** A client of the service at `baseUrl`, sending `token` as the bearer when given. */
export function serviceClient(baseUrl: string, token?: string): ServiceClient {
  return createClient<ServicePaths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

interface ErrorBody {
  message?: string;
  details?: { field: string; message: string }[];
  error_description?: string;
}

/** The message of an error answer in the service's one error shape, with each bad field. */
function messageOf(status: number, body: unknown): string {
  const e = (typeof body === 'object' && body !== null ? body : {}) as ErrorBody;
  const fields = e.details?.length ? e.details.map((d) => `${d.field}: ${d.message}`) : [];
  const message = e.message ?? e.error_description ?? `the service answered ${status}`;
  const hint = status === 401 ? ' (run `meb login` again)' : '';
  return fields.length > 1 ? `${message}${hint}\n  ${fields.join('\n  ')}` : `${message}${hint}`;
}

/**
 * Awaits one call of the typed client: its data, or a CliError with the service's own message
 * and the exit code of its status. A call that never reached the service is `unavailable`.
 */
export async function call<T>(
  baseUrl: string,
  request: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await request;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(
      `cannot reach the service at ${baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message}): check --url and that it is running`,
      EXIT.unavailable,
    );
  }
  const { response } = result;
  if (!response.ok) {
    throw new CliError(messageOf(response.status, result.error), exitCodeOf(response.status));
  }
  return result.data as T;
}
