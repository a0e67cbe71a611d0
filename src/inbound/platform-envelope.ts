import { HttpStatus } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { exceedsJsonDepth, tooDeepError } from '../common/json-depth';
import { parsePrecise } from '../common/precise-json';

/**
 * A verified platform event, as parsed from the request body. `payload` is whatever the
 * platform sent (an object nearly always; null, a string or an array are kept and delivered as
 * they came: docs/receiving.md), so it is read through platform-reader.
 */
export interface PlatformEnvelope {
  event: string;
  event_ts?: unknown;
  payload: unknown;
}

export const URL_VALIDATION_EVENT = 'endpoint.url_validation';

/** The event label of a body refused by parseEnvelope (its event name cannot be read). */
export const MALFORMED = '(malformed)';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Parses a verified body into the platform's envelope, or a 400 naming what is wrong, after
 * `refused` (where the caller counts it). Only called once the signature holds, so these
 * answers never reach a forger.
 */
export function parseEnvelope(
  rawBody: Buffer,
  refused: () => void = () => undefined,
): PlatformEnvelope & Record<string, unknown> {
  try {
    return readEnvelope(rawBody);
  } catch (error) {
    refused();
    throw error;
  }
}

function readEnvelope(rawBody: Buffer): PlatformEnvelope & Record<string, unknown> {
  let body: unknown;
  try {
    // Numbers a JavaScript number would change (2^63, 1e400) are kept exact (PreciseNumber).
    body = parsePrecise(rawBody.toString('utf8'));
  } catch {
    throw new ApiError(HttpStatus.BAD_REQUEST, 'Request body is not valid JSON');
  }
  // Before anything walks the event: storing it serialises it again, which recurses.
  if (exceedsJsonDepth(body)) throw tooDeepError();
  if (!isObject(body)) {
    throw ApiError.validation([{ field: 'body', message: 'body must be a JSON object' }]);
  }
  const details = [];
  if (typeof body.event !== 'string' || body.event.length === 0 || body.event.length > 200) {
    details.push({ field: 'event', message: 'event must be a string of 1 to 200 characters' });
  }
  // Only the URL validation needs a payload of its own shape; any other event is stored
  // whatever its payload is, as the platform never resends an event answered 4xx.
  if (body.event === URL_VALIDATION_EVENT && !isObject(body.payload)) {
    details.push({ field: 'payload', message: 'payload must be an object' });
  } else if (
    body.event === URL_VALIDATION_EVENT &&
    isObject(body.payload) &&
    (typeof body.payload.plainToken !== 'string' ||
      body.payload.plainToken.length === 0 ||
      body.payload.plainToken.length > 512)
  ) {
    details.push({
      field: 'payload.plainToken',
      message: 'payload.plainToken must be a string of 1 to 512 characters',
    });
  }
  if (details.length > 0) throw ApiError.validation(details);
  return body as PlatformEnvelope & Record<string, unknown>;
}
