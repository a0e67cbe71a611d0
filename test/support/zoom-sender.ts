import { randomBytes } from 'node:crypto';
import { zoomHeaders } from '../../scripts/platform/zoom-events';
import { postZoomEvent } from '../../scripts/platform/zoom-sender';
import { HttpResult } from './http';
import { ZOOM_SECRET_TOKEN } from './test-app';

export interface ZoomSendOptions {
  /** The secret token it is signed with (default: the test apps'). */
  secret?: string;
  timestamp?: number;
  /** Sent with exactly these headers instead, for requests the platform would never make. */
  headers?: Record<string, string>;
  /** The `x-zm-trackingid` sent: null sends none; absent, the platform sample's. */
  trackingId?: string | null;
}

/** A tracking id as the platform makes them, fresh each call (so a test can find its event). */
export const freshTrackingId = (): string => `v=2.0;clid=aw1;rid=${randomBytes(8).toString('hex')}`;

const bytesOf = (body: unknown): Buffer =>
  Buffer.isBuffer(body)
    ? body
    : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));

/**
 * The platform sender that `npm run send-event` uses, signing with the test apps' secret token
 * unless told otherwise: the one way the e2e specs post to /zoom/events.
 */
export function sendZoomEvent(
  baseUrl: string,
  body: unknown,
  options: ZoomSendOptions = {},
): Promise<HttpResult> {
  const { headers, timestamp, trackingId, secret = ZOOM_SECRET_TOKEN } = options;
  if (headers) return postZoomEvent(baseUrl, body, { headers });
  if (trackingId === undefined) return postZoomEvent(baseUrl, body, { secret, timestamp });
  const bytes = bytesOf(body);
  const signed = zoomHeaders(secret, bytes, timestamp);
  if (trackingId === null) delete signed['x-zm-trackingid'];
  else signed['x-zm-trackingid'] = trackingId;
  return postZoomEvent(baseUrl, bytes, { headers: signed });
}

/** Sends `body` signed with a fresh tracking id of its own; fails unless it gets a 200. */
export async function sendTracked(baseUrl: string, body: unknown): Promise<string> {
  const trackingId = freshTrackingId();
  await sendAccepted(baseUrl, body, { trackingId });
  return trackingId;
}

/** Sends `body` signed; fails unless the bridge answers 200. */
export async function sendAccepted(
  baseUrl: string,
  body: unknown,
  options: ZoomSendOptions = {},
): Promise<HttpResult> {
  const res = await sendZoomEvent(baseUrl, body, options);
  if (res.status !== 200) throw new Error(`POST /zoom/events: ${res.status} ${res.text}`);
  return res;
}
