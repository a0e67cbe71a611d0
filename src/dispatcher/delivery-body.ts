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
  return JSON.stringify({
    id: event.id,
    event: event.kind,
    created_at: event.createdAt.toISOString(),
    data: event.data,
    source: event.source,
  });
}

/** x-service-signature: lowercase hex HMAC-SHA256 with the webhook's secret over the exact body bytes. */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
