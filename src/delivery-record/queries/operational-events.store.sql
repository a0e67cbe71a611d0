-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgOperationalEventStore.failedDelivery
SELECT event_id, attempt_count, last_status_code, last_error FROM deliveries
       WHERE id = $1 AND status = 'failed';

-- PgOperationalEventStore.disabledWebhook
SELECT url, disabled_at FROM webhooks WHERE id = $1;

-- PgOperationalEventStore.fanOut, fanOutToAdmins
WITH targets AS (
  SELECT w.id FROM webhooks w LEFT JOIN webhooks about ON about.id = $1
  WHERE w.active AND w.events @> ARRAY[$3]::text[] AND w.owner_client_id = ANY($8::text[])
    AND ($1::uuid IS NULL OR (w.owner_client_id = about.owner_client_id AND w.id <> about.id))
    AND (w.filter_path IS NULL OR jsonb_path_match($6::jsonb, w.filter_path, w.filter_vars))
),
ev AS (
  INSERT INTO events (id, kind, data, source, created_at, body)
  SELECT $2, $3, $4::jsonb, NULL, $5, $6 WHERE EXISTS (SELECT 1 FROM targets)
  RETURNING id
)
INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, trace_context)
SELECT t.id, ev.id, $3, now(), $7 FROM ev, targets t
RETURNING id, webhook_id;
