import { createHmac } from 'node:crypto';

export interface CrcAnswer {
  plainToken: string;
  encryptedToken: string;
}

/**
 * The CRC (challenge-response check) of the platform's URL validation, docs/api.md#platform-events-post-zoomevents step 2: the
 * platform sends `endpoint.url_validation` with `payload.plainToken` and expects it back with
 * `encryptedToken` = hex HMAC-SHA256(secret token, plainToken). Answered only after the
 * request's signature verified, with the secret token that verified it.
 */
export function answerCrcChallenge(secret: string, plainToken: string): CrcAnswer {
  return {
    plainToken,
    encryptedToken: createHmac('sha256', secret).update(plainToken).digest('hex'),
  };
}
