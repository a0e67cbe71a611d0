-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- DeliveryLogStore.page
SELECT id, webhook_id, event_id, event,
coalesce(sent_body, body) AS body, status, attempt_count,
next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at,
series_start, requeued_by, requeued_at FROM deliveries d
WHERE d.webhook_id = $1
  AND ($2::text IS NULL OR d.status = $2)
  AND ($3::text IS NULL OR d.event = $3)
  AND ($4::timestamptz IS NULL OR (d.created_at, d.id) < ($4::timestamptz, $5::uuid))
ORDER BY d.created_at DESC, d.id DESC
LIMIT $6;

-- DeliveryLogStore.withEvent
SELECT id, webhook_id, event_id, event,
coalesce(sent_body, body) AS body, status, attempt_count,
next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at,
series_start, requeued_by, requeued_at, (SELECT e.body FROM events e WHERE e.id = d.event_id) AS event_body
FROM deliveries d
WHERE d.id = $1 AND d.webhook_id = $2;

-- DeliveryLogStore.attemptsOf
SELECT id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body
FROM delivery_attempts
WHERE delivery_id = $1
ORDER BY attempt;
