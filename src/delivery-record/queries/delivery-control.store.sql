-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgDeliveryControlStore.redeliver
UPDATE deliveries SET status = 'pending', series_start = attempt_count, next_attempt_at = now(),
completed_at = NULL, requeued_by = 'redeliver', requeued_at = now(), updated_at = now()
WHERE id = $1 AND webhook_id = $2 AND status <> 'pending'
RETURNING id, webhook_id, event_id, event,
coalesce(sent_body, body) AS body, status, attempt_count,
next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at,
series_start, requeued_by, requeued_at;

-- PgDeliveryControlStore.redeliver (was it pending)
SELECT id FROM deliveries WHERE id = $1 AND webhook_id = $2;

-- PgDeliveryControlStore.replay
UPDATE deliveries SET status = 'pending', series_start = attempt_count, next_attempt_at = now(),
completed_at = NULL, requeued_by = 'replay', requeued_at = now(), updated_at = now(), sent_body = NULL
WHERE webhook_id = $1 AND status = $2 AND created_at >= $3
  AND ($4::timestamptz IS NULL OR created_at < $4)
RETURNING id;

-- PgDeliveryControlStore.createMissed (read)
SELECT e.id, e.kind, e.data, e.source, e.created_at, e.body IS NOT NULL AS has_body
FROM events e JOIN webhooks w ON w.id = $1
WHERE (w.active AND w.owner_client_id IN (SELECT unnest($2::text[])) AND w.events && CASE WHEN e.kind LIKE 'zoom.%' THEN ARRAY[e.kind, 'zoom.*'] ELSE ARRAY[e.kind] END AND (e.source IS NULL OR w.owner_client_id || E'\t*' IN (SELECT unnest($2::text[])) OR (coalesce(e.source->>'account_id', '') <> '' AND (w.owner_client_id || E'\t' || coalesce(e.source->>'account_id', '') IN (SELECT unnest($2::text[])) OR (coalesce(e.source->>'account_id', ''), w.owner_client_id) IN (SELECT ins.account_id, ins.installed_by FROM installations ins WHERE ins.status <> 'revoked')))))
  AND coalesce(
    (SELECT (f.filter_path IS NULL OR jsonb_path_match(jsonb_build_object('id', e.id, 'event', e.kind, 'created_at', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', e.data, 'source', e.source), f.filter_path, f.filter_vars)) FROM webhook_filters f
     WHERE f.webhook_id = w.id AND f.valid_from <= e.created_at
     ORDER BY f.valid_from DESC LIMIT 1),
    (w.filter_path IS NULL OR jsonb_path_match(jsonb_build_object('id', e.id, 'event', e.kind, 'created_at', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', e.data, 'source', e.source), w.filter_path, w.filter_vars)))
  AND e.created_at >= greatest($3::timestamptz, $4::timestamptz)
  AND ($5::timestamptz IS NULL OR e.created_at < $5)
  AND ($6::timestamptz IS NULL OR (e.created_at, e.id) > ($6::timestamptz, $7::uuid))
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.webhook_id = $1 AND d.event_id = e.id)
ORDER BY e.created_at, e.id
LIMIT $8;

-- PgDeliveryControlStore.createMissed (lock)
SELECT pg_advisory_xact_lock(hashtext('replay:' || $1::text));

-- PgDeliveryControlStore.createMissed (insert)
INSERT INTO deliveries (webhook_id, event_id, event, body, next_attempt_at, requeued_by,
                        requeued_at, order_key, order_ts)
SELECT $1, i.event_id, i.kind, i.body, now(), 'missed', now(),
  CASE WHEN (w.ordering = 'meeting' AND e.order_key IS NOT NULL) THEN e.order_key END,
  CASE WHEN (w.ordering = 'meeting' AND e.order_key IS NOT NULL) THEN e.order_ts END
FROM unnest($2::uuid[], $3::text[], $4::text[]) AS i(event_id, kind, body)
JOIN events e ON e.id = i.event_id JOIN webhooks w ON w.id = $1
WHERE NOT EXISTS (SELECT 1 FROM deliveries x WHERE x.webhook_id = $1 AND x.event_id = i.event_id)
RETURNING id;

-- PgDeliveryControlStore.recentTests
SELECT created_at FROM deliveries
WHERE webhook_id = $1 AND event = 'webhook.test' AND created_at > $2
ORDER BY created_at DESC
LIMIT $3;
