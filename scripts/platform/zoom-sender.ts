import { zoomHeaders } from './zoom-events';

export interface SentEvent {
  status: number;
  headers: Headers;
  /** The answer parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
  text: string;
}

export type SendOptions =
  /** Signed as the platform signs, with this secret token (and timestamp, default now). */
  | { secret: string; timestamp?: number }
  /** Sent with exactly these headers, for requests the platform would never make. */
  | { headers: Record<string, string> };

/**
 * Posts a body to `{baseUrl}/zoom/events` as the platform would: objects as JSON, strings and
 * buffers as the exact bytes.
 */
export async function postZoomEvent(
  baseUrl: string,
  body: unknown,
  options: SendOptions,
): Promise<SentEvent> {
  const bytes = Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const headers =
    'headers' in options ? options.headers : zoomHeaders(options.secret, bytes, options.timestamp);
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
