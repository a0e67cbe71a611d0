-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgEventStore.fanOut (prepared as dispatcher_fan_out)
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::jsonb[], $5::text[],
                       $6::timestamptz[], $7::text[], $9::text[], $10::text[], $11::bigint[])
    AS i(id, kind, data, source, idempotency_key, created_at, body, trace_context, order_key,
         order_ts)
),
ek AS (
  INSERT INTO event_keys (idempotency_key, created_at)
  SELECT idempotency_key, created_at FROM input WHERE idempotency_key IS NOT NULL
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING idempotency_key
),
ev AS (
  INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body, order_key,
                      order_ts)
  SELECT id, kind, data, source, idempotency_key, created_at, body, order_key, order_ts
  FROM input
  WHERE idempotency_key IS NULL
     OR id IN (SELECT DISTINCT ON (k.idempotency_key) n.id FROM ek k
               JOIN input n ON n.idempotency_key = k.idempotency_key
               ORDER BY k.idempotency_key, n.id)
  RETURNING id
),
d AS (
  INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context,
                          order_key, order_ts)
  SELECT w.id, i.id, i.kind, now(), i.trace_context,
    CASE WHEN (w.ordering = 'meeting' AND i.order_key IS NOT NULL) THEN i.order_key END,
  CASE WHEN (w.ordering = 'meeting' AND i.order_key IS NOT NULL) THEN i.order_ts END
  FROM ev JOIN input i ON i.id = ev.id
  JOIN webhooks w ON (w.active AND w.owner_client_id IN (SELECT unnest($8::text[])) AND w.events && CASE WHEN i.kind LIKE 'zoom.%' THEN ARRAY[i.kind, 'zoom.*'] ELSE ARRAY[i.kind] END AND (i.source IS NULL OR w.owner_client_id || E'\t*' IN (SELECT unnest($8::text[])) OR (coalesce(i.source->>'account_id', '') <> '' AND (w.owner_client_id || E'\t' || coalesce(i.source->>'account_id', '') IN (SELECT unnest($8::text[])) OR (coalesce(i.source->>'account_id', ''), w.owner_client_id) IN (SELECT ins.account_id, ins.installed_by FROM installations ins WHERE ins.status <> 'revoked')))) AND (w.filter_path IS NULL OR jsonb_path_match(jsonb_build_object('id', i.id, 'event', i.kind, 'created_at', to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', i.data, 'source', i.source), w.filter_path, w.filter_vars)))
  RETURNING id, event_id, webhook_id
)
SELECT ev.id, array_remove(array_agg(d.id::text), NULL) AS delivery_ids,
  array_remove(array_agg(d.webhook_id::text), NULL) AS webhook_ids
FROM ev LEFT JOIN d ON d.event_id = ev.id
GROUP BY ev.id;

-- PgEventStore.findByIdempotencyKey
SELECT e.id, e.kind, e.data,
  coalesce(array_agg(d.id::text ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL), '{}'::text[])
    AS delivery_ids,
  coalesce(array_agg(d.webhook_id::text ORDER BY d.id) FILTER (WHERE d.id IS NOT NULL),
    '{}'::text[]) AS webhook_ids
FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
WHERE e.idempotency_key = $1
GROUP BY e.id, e.created_at;

-- PgEventStore.insertTest
WITH w AS (SELECT id FROM webhooks WHERE id = $1 AND active),
ev AS (
  INSERT INTO events (id, kind, data, source, created_at, body)
  SELECT $2, $3, $4, NULL, $5, $6 FROM w
  RETURNING id
)
INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context)
SELECT $1, ev.id, $3, now(), $7 FROM ev
RETURNING id, webhook_id, event_id, event,
coalesce(sent_body, body) AS body, status, attempt_count,
next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at,
series_start, requeued_by, requeued_at;
