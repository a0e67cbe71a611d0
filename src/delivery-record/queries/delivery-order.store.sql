-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgDeliveryOrderStore.ordered
SELECT id FROM webhooks WHERE id = ANY($1::uuid[]) AND ordering = 'meeting';

-- PgDeliveryOrderStore.heads (prepared as delivery_order_heads)
SELECT d.id, d.webhook_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.id = ANY($1::uuid[]) AND d.status = 'pending'
  AND d.next_attempt_at <= now() + interval '1 second'
  AND (d.lease_until IS NULL OR d.lease_until <= now())
  AND (d.order_key IS NULL OR w.ordering <> 'meeting' OR d.id = (
  SELECT h.id FROM deliveries h
  WHERE h.webhook_id = d.webhook_id AND h.order_key = d.order_key AND h.status = 'pending'
  ORDER BY (h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
DESC, h.order_ts, h.id
  LIMIT 1));

-- PgDeliveryOrderStore.next (prepared as delivery_order_next)
SELECT h.id, h.webhook_id
FROM (SELECT DISTINCT webhook_id, order_key FROM deliveries
      WHERE id = ANY($1::uuid[]) AND order_key IS NOT NULL) k
CROSS JOIN LATERAL (
  SELECT h.id, h.webhook_id, h.next_attempt_at, h.lease_until FROM deliveries h
  WHERE h.webhook_id = k.webhook_id AND h.order_key = k.order_key AND h.status = 'pending'
  ORDER BY (h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
DESC, h.order_ts, h.id
  LIMIT 1) h
WHERE h.next_attempt_at <= now() + interval '1 second'
  AND (h.lease_until IS NULL OR h.lease_until <= now());
