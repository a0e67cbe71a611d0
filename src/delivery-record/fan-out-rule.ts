import { CompiledFilter, compileFilter } from '../webhooks/event-filter';
import { ALL_PLATFORM_EVENTS, subscriptionsFor } from '../webhooks/subscription-events';
import type { AppConfig } from '../config/config.types';
import { filterMatches } from './fan-out-filter';

/*
 * Which webhooks get an event: the one rule of fan-out (docs/api.md#webhooks), in SQL for the
 * statements that create deliveries (publish(), the ingest statement, the replay of missed
 * events) and in TypeScript for the in-memory stores of the unit specs. A webhook gets an
 * event when it is active, its owner is still an API client (AUTH_CLIENTS), and it subscribes
 * to the event's kind, or, for a platform event (`zoom.<event>`), to `zoom.*`: one delivery
 * however many of its subscriptions match. A per-webhook condition on the event itself (a
 * filter) belongs here too, in both forms.
 */

/** SQL names of what the rule reads: the webhooks row, the event's kind, the client ids. */
export interface FanOutTerms {
  /** Alias of a `webhooks` row. */
  webhook: string;
  /** SQL expression of the event's kind. */
  kind: string;
  /** SQL expression of the text[] of API client ids. */
  clients: string;
  /**
   * SQL expression of the event's notification body as jsonb (fan-out-filter.ts's
   * eventBodyJsonb), which a webhook's filter must match (docs/destinations.md): given wherever deliveries
   * are created or counted as missed. Without it the rule is the subscription alone (what
   * counts how many webhooks may take a kind).
   */
  body?: string;
}

/**
 * The rule as a SQL condition. `events && …` is served by the partial GIN index
 * webhooks_active_events_idx (`WHERE active`), for one kind or a whole batch's.
 */
export function receivesSql({ webhook: w, kind, clients, body }: FanOutTerms): string {
  return (
    `(${w}.active AND ${w}.owner_client_id = ANY(${clients}) AND ${w}.events && ` +
    `CASE WHEN ${kind} LIKE 'zoom.%' THEN ARRAY[${kind}, '${ALL_PLATFORM_EVENTS}'] ` +
    `ELSE ARRAY[${kind}] END` +
    (body === undefined ? ')' : ` AND ${filterMatches(w, body)})`)
  );
}

/** What the rule reads of a webhook. */
export interface FanOutWebhook {
  active: boolean;
  ownerClientId: string;
  events: readonly string[];
  /** The filter as set (docs/destinations.md); null or absent: none. */
  filter?: Record<string, unknown> | null;
}

// Compiled once per filter text, as PostgreSQL keeps the compiled path on the row.
const compiled = new Map<string, CompiledFilter>();
function filterOf(filter: Record<string, unknown>): CompiledFilter {
  const key = JSON.stringify(filter);
  let found = compiled.get(key);
  if (!found) compiled.set(key, (found = compileFilter(filter)));
  return found;
}

/** The client ids whose webhooks the rule lets receive: those AUTH_CLIENTS configures. */
export const receivingClients = (config: Pick<AppConfig, 'auth'>): string[] =>
  config.auth.clients.map((c) => c.clientId);

/** The rule in TypeScript, as receivesSql has it. */
export function receives(
  webhook: FanOutWebhook,
  kind: string,
  clientIds: readonly string[],
  body?: unknown,
): boolean {
  return (
    webhook.active &&
    clientIds.includes(webhook.ownerClientId) &&
    subscriptionsFor(kind).some((subscription) => webhook.events.includes(subscription)) &&
    (body === undefined || !webhook.filter || filterOf(webhook.filter).matches(body))
  );
}
