import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers the platform signs its webhooks with (SPEC §5.1). */
export const ZOOM_SIGNATURE_HEADER = 'x-zm-signature';
export const ZOOM_TIMESTAMP_HEADER = 'x-zm-request-timestamp';

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
  secret: string;
  toleranceSeconds: number;
  nowMs?: number;
}

export type SignatureCheck = { ok: true } | { ok: false; message: string };

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
  const expected = Buffer.from(
    signZoomRequest(options.secret, timestamp, request.rawBody).slice(3),
    'hex',
  );
  const given = Buffer.from(signature.slice(3), 'hex');
  if (!timingSafeEqual(expected, given)) {
    return { ok: false, message: `${ZOOM_SIGNATURE_HEADER} does not match the request` };
  }
  return { ok: true };
}
