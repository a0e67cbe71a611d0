-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgDeliveryStore.claim (prepared as delivery_claim)
UPDATE deliveries d SET lease_until = now() + make_interval(secs => $2::int / 1000.0)
FROM webhooks w, events e
WHERE d.id = ANY($1::uuid[]) AND w.id = d.webhook_id AND e.id = d.event_id
  AND d.status = 'pending'
  AND d.next_attempt_at <= now() + interval '1 second'
  AND (d.lease_until IS NULL OR d.lease_until <= now()
       OR d.lease_until = ANY($3::timestamptz[]))
  AND (d.order_key IS NULL OR w.ordering <> 'meeting' OR d.id = (
  SELECT h.id FROM deliveries h
  WHERE h.webhook_id = d.webhook_id AND h.order_key = d.order_key AND h.status = 'pending'
  ORDER BY (h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
DESC, h.order_ts, h.id
  LIMIT 1))
RETURNING d.id, d.created_at::text AS created_at, d.event, coalesce(d.body, e.body) AS body,
  d.status, d.attempt_count, d.series_start, d.webhook_id, w.owner_client_id, w.destination, w.url, w.url_encrypted, w.template, w.secret_encrypted, w.headers_encrypted, w.previous_secret_encrypted, w.previous_secret_expires_at, w.active, w.consecutive_failures,
  d.trace_context, d.sent_body,
  CASE WHEN w.ordering = 'meeting' THEN d.order_key END AS order_key,
  CASE
  WHEN d.order_key IS NULL OR w.ordering <> 'meeting' THEN false
  ELSE EXISTS (
    SELECT 1 FROM deliveries s
    WHERE s.webhook_id = d.webhook_id AND s.order_key = d.order_key
      AND s.status = 'succeeded' AND s.order_ts > d.order_ts)
END AS late;

-- PgDeliveryStore.recordAttempt (prepared as delivery_record)
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::int[], $5::text[],
                       $6::timestamptz[], $7::timestamptz[], $8::int[], $9::text[], $10::text[],
                       $11::timestamptz[])
    AS i(id, attempt, status, status_code, error, next_attempt_at, started_at, duration_ms,
         response_body, sent_body, created_at)
),
updated AS (
  UPDATE deliveries d SET
    attempt_count = i.attempt,
    status = i.status,
    last_status_code = i.status_code,
    last_error = i.error,
    next_attempt_at = i.next_attempt_at,
    completed_at = CASE WHEN i.status = 'pending' THEN NULL ELSE now() END,
    lease_until = NULL,
    sent_body = coalesce(i.sent_body, d.sent_body),
    updated_at = now()
  FROM input i
  WHERE d.id = i.id AND d.created_at = i.created_at AND d.created_at = ANY($11::timestamptz[])
    AND d.status = 'pending' AND d.attempt_count = i.attempt - 1
  RETURNING d.id
)
INSERT INTO delivery_attempts
  (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
SELECT i.id, i.attempt, i.started_at, i.duration_ms, i.status_code, i.error, i.response_body
FROM input i JOIN updated u ON u.id = i.id
RETURNING delivery_id;

-- PgDeliveryStore.release
UPDATE deliveries SET lease_until = NULL
WHERE id = ANY($1::uuid[]) AND created_at = ANY($3::timestamptz[])
  AND lease_until = ANY($2::timestamptz[]) AND status = 'pending';

-- PgDeliveryStore.cancel
UPDATE deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL,
  lease_until = NULL, completed_at = now(), updated_at = now()
WHERE id = $1 AND created_at = $3 AND status = 'pending'
RETURNING id;

-- PgDeliveryStore.limits
SELECT id, coalesce(max_in_flight, $2) AS max_in_flight,
  coalesce(rate_limit, CASE WHEN destination->>'type' = ANY($3::text[]) THEN 1 END) AS rate_limit
FROM webhooks
WHERE id = ANY($1::uuid[]);

-- PgDeliveryStore.due
SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.webhook_id = $1 AND d.status = 'pending' AND d.next_attempt_at <= now()
  AND (d.lease_until IS NULL OR d.lease_until <= now()) AND NOT (d.id = ANY($3::uuid[]))
  AND (d.order_key IS NULL OR w.ordering <> 'meeting' OR d.id = (
  SELECT h.id FROM deliveries h
  WHERE h.webhook_id = d.webhook_id AND h.order_key = d.order_key AND h.status = 'pending'
  ORDER BY (h.attempt_count > h.series_start OR coalesce(h.lease_until > now(), false))
DESC, h.order_ts, h.id
  LIMIT 1))
ORDER BY d.next_attempt_at
LIMIT $2;
