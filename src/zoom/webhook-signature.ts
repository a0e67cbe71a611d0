import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers the platform signs its webhooks with (docs/api.md#platform-events-post-zoomevents). */
export const ZOOM_SIGNATURE_HEADER = 'x-zm-signature';
export const ZOOM_TIMESTAMP_HEADER = 'x-zm-request-timestamp';
/** The platform's id of one delivery attempt, which its support asks for (not signed). */
export const ZOOM_TRACKING_HEADER = 'x-zm-trackingid';

const SIGNATURE_FORMAT = /^v0=[0-9a-f]{64}$/;
// Seconds since the epoch; twelve digits reach the year 33658, longer is garbage.
const TIMESTAMP_FORMAT = /^[0-9]{1,12}$/;

export interface SignedRequest {
  /** Header values as Node gives them: absent, one string, or several when repeated. */
  timestamp: string | string[] | undefined;
  signature: string | string[] | undefined;
  rawBody: Buffer;
}

export interface VerifyOptions {
  /** Every secret token configured (several platform apps, or a rotation): any may sign. */
  secrets: readonly string[];
  toleranceSeconds: number;
  nowMs?: number;
}

/** On success, the secret token that verified the request (the CRC answer is made with it). */
export type SignatureCheck = { ok: true; secret: string } | { ok: false; message: string };

/** `v0=` + hex HMAC-SHA256(secret, `v0:{timestamp}:{raw body}`), over the bytes as received. */
export function signZoomRequest(secret: string, timestamp: string, rawBody: Buffer): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest('hex')}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Checks a platform webhook: both headers present and well formed, the timestamp within the
 * tolerance in either direction (a clock ahead of ours is as suspicious as a replay), and the
 * signature equal in constant time. The message names what failed; it never echoes a secret.
 */
export function verifyZoomSignature(
  request: SignedRequest,
  options: VerifyOptions,
): SignatureCheck {
  const timestamp = single(request.timestamp);
  const signature = single(request.signature);
  if (timestamp === undefined) {
    return { ok: false, message: `${ZOOM_TIMESTAMP_HEADER} header is missing or repeated` };
  }
  if (signature === undefined) {
    return { ok: false, message: `${ZOOM_SIGNATURE_HEADER} header is missing or repeated` };
  }
  if (!TIMESTAMP_FORMAT.test(timestamp)) {
    return { ok: false, message: `${ZOOM_TIMESTAMP_HEADER} must be a Unix time in seconds` };
  }
  const nowSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  const ageSeconds = Math.abs(nowSeconds - Number(timestamp));
  if (ageSeconds > options.toleranceSeconds) {
    return {
      ok: false,
      message: `${ZOOM_TIMESTAMP_HEADER} is more than ${options.toleranceSeconds} s away from now`,
    };
  }
  if (!SIGNATURE_FORMAT.test(signature)) {
    return {
      ok: false,
      message: `${ZOOM_SIGNATURE_HEADER} must be v0= and 64 lowercase hex digits`,
    };
  }
  const given = Buffer.from(signature.slice(3), 'hex');
  // Every secret is tried, so the time taken does not tell which one (if any) matched.
  let matched: string | undefined;
  for (const secret of options.secrets) {
    const expected = Buffer.from(
      signZoomRequest(secret, timestamp, request.rawBody).slice(3),
      'hex',
    );
    if (timingSafeEqual(expected, given) && matched === undefined) matched = secret;
  }
  if (matched === undefined) {
    return { ok: false, message: `${ZOOM_SIGNATURE_HEADER} does not match the request` };
  }
  return { ok: true, secret: matched };
}
