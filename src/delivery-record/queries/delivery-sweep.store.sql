-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- DeliverySweepStore.due
SELECT d.id, d.webhook_id, d.next_attempt_at FROM deliveries d
JOIN webhooks w ON w.id = d.webhook_id
WHERE d.status = 'pending'
  AND d.next_attempt_at <= now() - make_interval(secs => $1::int / 1000.0)
  AND (d.lease_until IS NULL OR d.lease_until <= now())
  AND ($2::timestamptz IS NULL OR (d.next_attempt_at, d.id) > ($2::timestamptz, $3::uuid))
  AND (d.order_key IS NULL OR w.ordering <> 'meeting' OR d.id = (
  SELECT h.id FROM deliveries h
  WHERE h.webhook_id = d.webhook_id AND h.order_key = d.order_key AND h.status = 'pending'
  ORDER BY (h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
DESC, h.order_ts, h.id
  LIMIT 1))
ORDER BY d.next_attempt_at, d.id
LIMIT $4;
