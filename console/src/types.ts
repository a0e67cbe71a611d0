/** The shapes of the service's public API that the console reads (docs/api.md). */

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface Webhook {
  id: string;
  url: string | null;
  events: string[];
  active: boolean;
  disabled_reason?: 'gone' | 'failing' | null;
  disabled_at?: string | null;
  secret_hint: string;
  previous_secret_expires_at?: string | null;
  /** Its destination (docs/destinations.md); an http one when absent. */
  destination?: { type: string };
  /** Its JSONata template (docs/templates.md); null or absent: none. */
  template?: string | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface Delivery {
  id: string;
  webhook_id: string;
  event: string;
  event_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}

export interface Attempt {
  attempt: number;
  started_at: string;
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

export interface DeliveryDetail extends Delivery {
  payload: unknown;
  attempts: Attempt[];
}

export interface EventType {
  name: string;
  description: string;
  schema: JsonSchema;
}

export interface JsonSchema {
  type?: string | string[];
  format?: string;
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  description?: string;
  examples?: unknown[];
  minimum?: number;
  [keyword: string]: unknown;
}

/** An event as the event lookup answers it (GET /api/events/:id). */
export interface EventRecord {
  id: string;
  event: string;
  created_at: string;
  data: unknown;
  source: { tracking_id?: string | null; [key: string]: unknown } | null;
  deliveries?: {
    id: string;
    webhook_id: string;
    status: DeliveryStatus;
    attempt_count: number;
    last_status_code: number | null;
    completed_at: string | null;
  }[];
}
