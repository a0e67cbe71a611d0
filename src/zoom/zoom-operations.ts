/**
 * Every platform REST operation the client may call, in one table: the contract test
 * (test/zoom-contract.e2e-spec.ts) checks each method, path and query parameter against the
 * platform's published OpenAPI document, so a call the platform does not have cannot ship.
 */
export interface ZoomOperation {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** OpenAPI path template relative to the REST base (`…/v2`). */
  path: string;
  /** Query parameters the client may send; anything else is a programming error. */
  query: readonly string[];
}

export const ZOOM_OPERATIONS = {
  createMeeting: { method: 'POST', path: '/users/{userId}/meetings', query: [] },
  listUserMeetings: {
    method: 'GET',
    path: '/users/{userId}/meetings',
    query: ['type', 'page_size', 'next_page_token'],
  },
  getMeeting: { method: 'GET', path: '/meetings/{meetingId}', query: [] },
  updateMeeting: { method: 'PATCH', path: '/meetings/{meetingId}', query: [] },
  deleteMeeting: { method: 'DELETE', path: '/meetings/{meetingId}', query: [] },
  updateMeetingStatus: { method: 'PUT', path: '/meetings/{meetingId}/status', query: [] },
  listUsers: { method: 'GET', path: '/users', query: ['status', 'page_size', 'next_page_token'] },
  listUserRecordings: {
    method: 'GET',
    path: '/users/{userId}/recordings',
    query: ['from', 'to', 'page_size', 'next_page_token'],
  },
  getMeetingRecordings: { method: 'GET', path: '/meetings/{meetingId}/recordings', query: [] },
  deleteMeetingRecordings: {
    method: 'DELETE',
    path: '/meetings/{meetingId}/recordings',
    query: ['action'],
  },
} as const satisfies Record<string, ZoomOperation>;

export type ZoomOperationName = keyof typeof ZOOM_OPERATIONS;

export type ZoomQueryValue = string | number | boolean | undefined;

/**
 * The platform wants a meeting UUID that begins with `/` or contains `//` encoded twice
 * (its gateway decodes once before routing); every other value is encoded once.
 */
export function encodeMeetingId(meetingId: string): string {
  const once = encodeURIComponent(meetingId);
  return meetingId.startsWith('/') || meetingId.includes('//') ? encodeURIComponent(once) : once;
}

function encodeParam(name: string, value: string): string {
  return name === 'meetingId' ? encodeMeetingId(value) : encodeURIComponent(value);
}

/** The operation's path with its parameters encoded, plus the query string (if any). */
export function buildZoomPath(
  operation: ZoomOperation,
  params: Record<string, string> = {},
  query: Record<string, ZoomQueryValue> = {},
): string {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') {
      throw new Error(`${operation.method} ${operation.path}: path parameter ${name} is missing`);
    }
    return encodeParam(name, value);
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (!operation.query.includes(name)) {
      throw new Error(
        `${operation.method} ${operation.path}: query parameter ${name} is not listed`,
      );
    }
    search.set(name, String(value));
  }
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}
