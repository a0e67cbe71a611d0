-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgEventLookupStore.findOwned
SELECT e.id, e.kind, e.created_at, e.body,
CASE WHEN e.body IS NULL THEN e.data::text END AS data_text, e.source, d.id AS delivery_id, d.webhook_id,
  d.status, d.attempt_count, d.last_status_code, d.completed_at
FROM events e
JOIN deliveries d ON d.event_id = e.id
JOIN webhooks w ON w.id = d.webhook_id AND w.owner_client_id = $2
WHERE e.id = $1
ORDER BY d.created_at, d.id;

-- PgEventLookupStore.listOwned (no filter)
SELECT e.id, e.kind, e.created_at, e.body,
  CASE WHEN e.body IS NULL THEN e.data::text END AS data_text, e.source FROM events e
       WHERE EXISTS (SELECT 1 FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.event_id = e.id AND w.owner_client_id = $1)
       ORDER BY e.created_at DESC, e.id DESC LIMIT $2;

-- PgEventLookupStore.listOwned (every filter)
SELECT e.id, e.kind, e.created_at, e.body,
  CASE WHEN e.body IS NULL THEN e.data::text END AS data_text, e.source FROM events e
       WHERE EXISTS (SELECT 1 FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.event_id = e.id AND w.owner_client_id = $1) AND e.source->>'tracking_id' = $2 AND e.source->>'tracking_id' IS NOT NULL AND e.kind = $3 AND e.created_at >= $4 AND e.created_at < $5 AND (e.created_at, e.id) < ($6::timestamptz, $7::uuid)
       ORDER BY e.created_at DESC, e.id DESC LIMIT $8;
