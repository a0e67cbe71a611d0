import { createHmac } from 'node:crypto';

export interface EventSource {
  platform: 'zoom';
  event: string;
  event_ts: number;
  account_id: string;
  /** The platform's x-zm-trackingid of the request that brought the event; null when absent. */
  tracking_id: string | null;
}

/**
 * The notification body of SPEC §4, serialised once when the event is published: every attempt
 * of every delivery of the event sends these bytes, so a signature never drifts.
 */
export function deliveryBody(event: {
  id: string;
  kind: string;
  createdAt: Date;
  data: Record<string, unknown>;
  source: EventSource | null;
}): string {
  return bodyOfSerialised(event, JSON.stringify(event.data), JSON.stringify(event.source));
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
 * JSON for a jsonb column. jsonb cannot hold U+0000, which a meeting topic or a name may carry;
 * the record keeps U+FFFD there, while the body (text) sends the exact characters.
 */
export function toJsonb(value: unknown): string {
  return jsonbOfSerialised(value, JSON.stringify(value));
}

/** toJsonb() of a value whose JSON.stringify is `json` already. */
export function jsonbOfSerialised(value: unknown, json: string): string {
  // JSON spells U+0000 as \u0000; only a text with that spelling needs the replacing pass.
  if (!json.includes('\\u0000')) return json;
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? v.replaceAll('\u0000', '\uFFFD') : v,
  );
}

/** x-service-signature: lowercase hex HMAC-SHA256 with the webhook's secret over the exact body bytes. */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
