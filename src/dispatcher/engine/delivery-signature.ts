import { createHmac } from 'node:crypto';
import { signBody } from '../../delivery-record/delivery-body';

/** The secrets that sign one attempt: the current one, and the replaced one while in its grace. */
export interface SigningSecrets {
  current: string;
  /** Null when there is none or its grace is over (docs/receiving.md). */
  previous: string | null;
}

export interface SignedAttempt {
  deliveryId: string;
  /** The exact bytes sent; every attempt of a delivery sends the same ones. */
  body: Buffer;
  /** Unix seconds when this attempt is signed. */
  timestamp: number;
  secrets: SigningSecrets;
}

const WHSEC_PREFIX = 'whsec_';
// Canonical padded base64, as the Standard Webhooks libraries decode it; anything else after
// the prefix is not that form, and the whole secret is then the key.
const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of `webhook-signature` (docs/receiving.md): a `whsec_` + base64 secret stands for the bytes
 * it encodes (what the libraries do by default, so such a secret verifies as it is); any other
 * secret is its UTF-8 bytes (a library's raw-key form).
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC_PREFIX)) {
    const encoded = secret.slice(WHSEC_PREFIX.length);
    if (encoded.length > 0 && PADDED_BASE64.test(encoded)) return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`, without copying the body. */
function v1Signature(secret: string, attempt: SignedAttempt): string {
  const mac = createHmac('sha256', standardWebhooksKey(secret))
    .update(`${attempt.deliveryId}.${attempt.timestamp}.`)
    .update(attempt.body)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The signature headers of one attempt: the seed's `x-service-signature` (unchanged, over the
 * body alone) and the Standard Webhooks three. While a replaced secret is in its grace, both
 * secrets sign (new first), so a receiver verifies with whichever it holds.
 */
export function signatureHeaders(attempt: SignedAttempt): Record<string, string> {
  const { current, previous } = attempt.secrets;
  const headers: Record<string, string> = {
    'x-service-signature': signBody(current, attempt.body),
    'webhook-id': attempt.deliveryId,
    'webhook-timestamp': String(attempt.timestamp),
    'webhook-signature': v1Signature(current, attempt),
  };
  if (previous !== null) {
    headers['x-service-signature-previous'] = signBody(previous, attempt.body);
    headers['webhook-signature'] += ` ${v1Signature(previous, attempt)}`;
  }
  return headers;
}

/** Unix seconds of `at`, the `webhook-timestamp` of an attempt signed then. */
export const unixSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);
