import { orderedSql } from './order-sql';
import { eventBodyJsonb, filterMatches } from './fan-out-filter';
import { receivesSql } from './fan-out-rule';

/** What the statement composing the fan-out part names for it (SQL text, not values). */
export interface FanOutPartTerms {
  /**
   * FROM of the rows to publish, each as `i` with event_id, kind, data, source,
   * idempotency_key, created_at, body, order_key and order_ts.
   */
  from: string;
  /** The condition a row of `from` meets to be published. */
  where: string;
  /** The relation of those rows (with lease_ms and trace_context) by event_id. */
  rows: string;
  /** SQL expression of the text[] of API client ids whose webhooks take events. */
  clients: string;
  /**
   * A relation of (event_id, webhook_id) pairs the fan-out rule selected already, filters
   * aside, every pair of each row published: the part then applies only the webhooks' filters
   * to them, not the whole rule again (the ingest counts an event's webhooks before it decides
   * to publish it, and with many platform accounts each pass of the rule reads every webhook
   * of the kind). Absent: the rule selects the webhooks.
   */
  matched?: string;
  /**
   * The condition a published row meets to claim its idempotency key in event_keys (default:
   * every published row). A key only another publisher of the same key could race for needs
   * the claim; the ingest's inline events that leave their inbound event processed have no
   * such publisher (their key names an inbound event no job will take again).
   */
  claims?: string;
}

/**
 * The fan-out insert as a part of a larger statement (docs/architecture.md): the CTEs `ev`
 * (the events stored: id) and `d` (a delivery per webhook the fan-out rule selects: id,
 * event_id, webhook_id, lease_until, created_at), for the statement that stores inbound events
 * to publish in the same round trip. A delivery to a webhook with ordering 'meeting' of an event with an
 * ordering key carries the key and is never leased here: it goes only when its turn comes,
 * which the claim checks (docs/receiving.md#ordered-delivery-per-meeting); the others are
 * leased for lease_ms, to the worker of the process that stored them.
 */
export const fanOutPart = ({
  from,
  where,
  rows,
  clients,
  matched,
  claims = where,
}: FanOutPartTerms): string => `ek AS (
    INSERT INTO event_keys (idempotency_key, created_at)
    SELECT i.idempotency_key, i.created_at
    FROM ${from}
    WHERE ${claims} AND i.idempotency_key IS NOT NULL
  ),
  ev AS (
    INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body, order_key,
                        order_ts)
    SELECT i.event_id, i.kind, i.data, i.source, i.idempotency_key, i.created_at, i.body,
      i.order_key, i.order_ts
    FROM ${from}
    WHERE ${where}
    RETURNING id
  ),
  d AS (
    INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, lease_until,
                            trace_context, order_key, order_ts)
    SELECT w.id, i.event_id, i.kind, now(),
      CASE WHEN NOT o.ordered THEN now() + make_interval(secs => i.lease_ms / 1000.0) END,
      i.trace_context, CASE WHEN o.ordered THEN i.order_key END,
      CASE WHEN o.ordered THEN i.order_ts END
    FROM ev JOIN ${rows} i ON i.event_id = ev.id
    ${
      matched === undefined
        ? `JOIN webhooks w ON ${receivesSql({
            webhook: 'w',
            kind: 'i.kind',
            clients,
            body: eventBodyJsonb('i', { id: 'event_id' }),
            event: 'i',
          })}`
        : `JOIN ${matched} m ON m.event_id = i.event_id
    JOIN webhooks w ON w.id = m.webhook_id AND ${filterMatches('w', eventBodyJsonb('i', { id: 'event_id' }))}`
    }
    CROSS JOIN LATERAL (SELECT ${orderedSql('w', 'i')} AS ordered) o
    RETURNING id, event_id, webhook_id, lease_until, created_at
  )`;
