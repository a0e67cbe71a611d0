/**
 * A small typed wrapper over fetch for the service's public API: the bearer token on every
 * call, JSON in and out, and every error answer turned into an ApiProblem carrying the
 * message the API gave (docs/api.md#errors shape), which the pages show as it is.
 */

export interface ApiErrorBody {
  statusCode?: number;
  error?: string;
  message?: string;
  error_description?: string;
  details?: { field: string; message: string }[];
}

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: ApiErrorBody | null = null,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }

  /** A 404 from no route at all (the service predates the route), not from a missing thing. */
  get noRoute(): boolean {
    return this.status === 404 && /^Cannot [A-Z]+ \//.test(this.body?.message ?? '');
  }
}

/** The message to show for an error answer: the API's own, else the HTTP status. */
export function problemFrom(status: number, body: unknown): ApiProblem {
  const parsed = body && typeof body === 'object' ? (body as ApiErrorBody) : null;
  const message =
    (typeof parsed?.message === 'string' && parsed.message) ||
    (typeof parsed?.error_description === 'string' && parsed.error_description) ||
    (typeof parsed?.error === 'string' && parsed.error) ||
    `The service answered HTTP ${status}`;
  return new ApiProblem(status, message, parsed);
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface ApiOptions {
  token: string;
  fetch?: Fetch;
  /** Told about a 401, so the session can end and the sign-in page return. */
  onUnauthorized?: (problem: ApiProblem) => void;
}

export class Api {
  private readonly fetch: Fetch;

  constructor(private readonly options: ApiOptions) {
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  get<T>(path: string, query?: Record<string, string | undefined>): Promise<T> {
    return this.call<T>('GET', withQuery(path, query));
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, body ?? {});
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PATCH', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.call<T>('DELETE', path);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.token}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch {
      throw new ApiProblem(0, 'The service cannot be reached; check the connection and retry');
    }
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) {
      const problem = problemFrom(res.status, parsed);
      if (res.status === 401) this.options.onUnauthorized?.(problem);
      throw problem;
    }
    return parsed as T;
  }
}

export function withQuery(path: string, query?: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== '') params.set(key, value);
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/** A path segment from a value the page got from the API or the address bar. */
export const seg = (value: string): string => encodeURIComponent(value);
