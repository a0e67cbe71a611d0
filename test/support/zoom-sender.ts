import { postZoomEvent } from '../../scripts/platform/zoom-sender';
import { HttpResult } from './http';
import { ZOOM_SECRET_TOKEN } from './test-app';

/**
 * The platform sender that `npm run send-event` uses, signing with the test apps' secret token
 * unless told otherwise.
 */
export function sendZoomEvent(
  baseUrl: string,
  body: unknown,
  options: { secret?: string; timestamp?: number; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const { headers, timestamp, secret = ZOOM_SECRET_TOKEN } = options;
  return postZoomEvent(baseUrl, body, headers ? { headers } : { secret, timestamp });
}
