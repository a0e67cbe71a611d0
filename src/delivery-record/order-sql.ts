/*
 * The ordering fragments (docs/receiving.md#ordered-delivery-per-meeting), for every statement
 * of the record that creates, claims, sweeps or reads back an ordered webhook's deliveries.
 */

/**
 * Which of a key's pending deliveries goes next (docs/receiving.md#ordered-delivery-per-meeting), for `h` over deliveries: the one
 * under way (leased to a worker, or between the attempts of its series) first, so that a late
 * event never overtakes it; then the oldest event by the platform's event_ts (the id breaks a
 * tie the same way everywhere).
 */
export const HEAD_ORDER = `(h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
  DESC, h.order_ts, h.id`;

/**
 * The id of the delivery of `d`'s webhook and ordering key that goes next (see HEAD_ORDER).
 * The partial index deliveries_order_idx serves it: a key holds one meeting's deliveries.
 */
export const orderHeadOf = (d: string): string => `(
    SELECT h.id FROM deliveries h
    WHERE h.webhook_id = ${d}.webhook_id AND h.order_key = ${d}.order_key AND h.status = 'pending'
    ORDER BY ${HEAD_ORDER}
    LIMIT 1)`;

/**
 * Whether a delivery to webhook `w` of event `e` (a row with order_key) is ordered (docs/receiving.md#ordered-delivery-per-meeting):
 * the webhook orders by meeting and the event has a key.
 */
export const orderedSql = (w: string, e: string): string =>
  `(${w}.ordering = 'meeting' AND ${e}.order_key IS NOT NULL)`;

/** The order_key and order_ts of a new delivery to `w` of event `e`: null when not ordered. */
export const deliveryOrderSql = (w: string, e: string): string =>
  `CASE WHEN ${orderedSql(w, e)} THEN ${e}.order_key END,
    CASE WHEN ${orderedSql(w, e)} THEN ${e}.order_ts END`;

/**
 * Whether `d` (joined with its webhook `w`) may be sent now as far as ordering goes: it has no
 * ordering key, its webhook no longer orders, or it is its key's head.
 */
export const orderAllows = (d: string, w: string): string =>
  `(${d}.order_key IS NULL OR ${w}.ordering <> 'meeting' OR ${d}.id = ${orderHeadOf(d)})`;

/**
 * Whether `d` is late: an event of its key newer than its own was delivered already. Only for
 * a webhook that orders (`w`); CASE keeps the others from running the subquery.
 */
export const orderLate = (d: string, w: string): string => `CASE
    WHEN ${d}.order_key IS NULL OR ${w}.ordering <> 'meeting' THEN false
    ELSE EXISTS (
      SELECT 1 FROM deliveries s
      WHERE s.webhook_id = ${d}.webhook_id AND s.order_key = ${d}.order_key
        AND s.status = 'succeeded' AND s.order_ts > ${d}.order_ts)
  END`;
