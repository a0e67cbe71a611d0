import type { InboundVia } from '../common/inbound-via';
import { createHmac } from 'node:crypto';
import { holdsImpreciseNumber, storableCopy, stringifyPrecise } from '../common/precise-json';

export interface EventSource {
  platform: 'zoom';
  event: string;
  event_ts: number;
  account_id: string;
  /** The platform's x-zm-trackingid of the request that brought the event; null when absent. */
  tracking_id: string | null;
  /** How the service learned of it: webhook, websocket or reconciliation (docs/inbound-sources.md). */
  via: InboundVia;
}

/**
 * The notification body of docs/api.md#notifications, serialised once when the event is published: every attempt
 * of every delivery of the event sends these bytes, so a signature never drifts.
 */
export function deliveryBody(event: {
  id: string;
  kind: string;
  createdAt: Date;
  data: unknown;
  source: EventSource | null;
}): string {
  return bodyOfSerialised(event, stringifyPrecise(event.data), JSON.stringify(event.source));
}

/**
 * deliveryBody() from the event's data and source already serialised (JSON.stringify), for a
 * caller that needs them on their own too: the same bytes, without serialising them twice.
 */
export function bodyOfSerialised(
  event: { id: string; kind: string; createdAt: Date },
  dataJson: string,
  sourceJson: string,
): string {
  return (
    `{"id":${JSON.stringify(event.id)},"event":${JSON.stringify(event.kind)},` +
    `"created_at":"${event.createdAt.toISOString()}","data":${dataJson},"source":${sourceJson}}`
  );
}

/**
 * JSON for a jsonb column. jsonb cannot hold U+0000 or an unpaired surrogate, which a meeting
 * topic or a name may carry, nor a number past numeric's range; the record keeps U+FFFD (and
 * such a number as a string) there, while the body (text) sends the exact characters and digits.
 */
export function toJsonb(value: unknown): string {
  return jsonbOfSerialised(value, stringifyPrecise(value));
}

/** toJsonb() of a value whose stringifyPrecise is `json` already. */
export function jsonbOfSerialised(value: unknown, json: string): string {
  // JSON.stringify spells U+0000 and unpaired surrogates as escapes (and writes any other text
  // as it is); past numeric's range can only be a PreciseNumber. Only then the replacing pass.
  if (!json.includes('\\u') && !holdsImpreciseNumber(value)) return json;
  const { value: storable, changed } = storableCopy(value);
  return changed ? stringifyPrecise(storable) : json;
}

/** x-service-signature: lowercase hex HMAC-SHA256 with the webhook's secret over the exact body bytes. */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
