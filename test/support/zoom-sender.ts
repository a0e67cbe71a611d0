import { HttpResult } from './http';
import { zoomHeaders } from '../fixtures/zoom-events';
import { ZOOM_SECRET_TOKEN } from './test-app';

/**
 * Posts a body to /zoom/events as the platform would: objects as JSON, strings and buffers as
 * the exact bytes, signed with the test secret unless other headers are given.
 */
export async function sendZoomEvent(
  baseUrl: string,
  body: unknown,
  options: { secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const headers =
    options.headers ?? zoomHeaders(options.secret ?? ZOOM_SECRET_TOKEN, bytes, options.timestamp);
  const res = await fetch(`${baseUrl}/zoom/events`, { method: 'POST', headers, body: bytes });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}
