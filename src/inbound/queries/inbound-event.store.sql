-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/inbound/queries.spec.ts; that spec fails when the code and this disagree.

-- PgInboundEventStore.insert (prepared as inbound_ingest)
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS i(id uuid, event text, identity_key text, event_ts bigint, account_id text, payload jsonb,
         tracking_id text, download_token_encrypted text, as_is text, plan text, event_id uuid,
         kind text, data jsonb, source jsonb, idempotency_key text, created_at timestamptz, body text,
         lease_ms int, raw_body text, trace_context text, order_key text, order_ts bigint,
         via text)
),
holding AS MATERIALIZED (SELECT split_part(c, E'\t', 1) AS client, split_part(c, E'\t', 2) AS account FROM unnest($3::text[]) c WHERE strpos(c, E'\t') > 0),
matched AS (
  SELECT n.event_id, m.id AS webhook_id
  FROM input n CROSS JOIN LATERAL (
    SELECT w.id FROM webhooks w
    WHERE (n.source IS NULL OR (SELECT count(*) FROM holding WHERE account = '*') > 16)
      AND (w.active AND w.owner_client_id IN (SELECT unnest($3::text[])) AND w.events && CASE WHEN n.kind LIKE 'zoom.%' THEN ARRAY[n.kind, 'zoom.*'] ELSE ARRAY[n.kind] END AND (n.source IS NULL OR w.owner_client_id || E'\t*' IN (SELECT unnest($3::text[])) OR (coalesce(n.source->>'account_id', '') <> '' AND (w.owner_client_id || E'\t' || coalesce(n.source->>'account_id', '') IN (SELECT unnest($3::text[])) OR (coalesce(n.source->>'account_id', ''), w.owner_client_id) IN (SELECT ins.account_id, ins.installed_by FROM installations ins WHERE ins.status <> 'revoked')))))
    UNION ALL
    SELECT w.id
    FROM (SELECT h.client FROM holding h
          WHERE h.account = '*' OR (coalesce(n.source->>'account_id', '') <> '' AND h.account = coalesce(n.source->>'account_id', ''))
          UNION
          SELECT ins.installed_by FROM installations ins
          WHERE coalesce(n.source->>'account_id', '') <> '' AND ins.account_id = coalesce(n.source->>'account_id', '') AND ins.status <> 'revoked'
            AND ins.installed_by = ANY($3::text[])) h
    CROSS JOIN LATERAL (
      SELECT w.id FROM webhooks w
      WHERE w.active AND array_append(w.events, E'\t' || w.owner_client_id) @> ARRAY[E'\t' || h.client]
        AND array_append(w.events, E'\t' || w.owner_client_id) && CASE WHEN n.kind LIKE 'zoom.%' THEN ARRAY[n.kind, 'zoom.*'] ELSE ARRAY[n.kind] END
      OFFSET 0) w
    WHERE n.source IS NOT NULL AND NOT (SELECT count(*) FROM holding WHERE account = '*') > 16
    LIMIT $2 + 1
  ) m
  WHERE n.plan = 'publish'
),
reach AS (
  SELECT event_id, count(*) AS webhooks FROM matched GROUP BY event_id
),
taken AS (
  SELECT k.as_is FROM (SELECT DISTINCT as_is FROM input WHERE as_is IS NOT NULL) k
  WHERE EXISTS (SELECT 1 FROM webhooks w
                WHERE w.active AND w.events && CASE WHEN k.as_is LIKE 'zoom.%' THEN ARRAY[k.as_is, 'zoom.*'] ELSE ARRAY[k.as_is] END)
),
watched AS (
  SELECT a.as_is, a.source
  FROM (SELECT DISTINCT n.as_is, CASE WHEN n.source IS NULL THEN NULL ELSE jsonb_build_object('account_id', n.source->'account_id') END AS source FROM input n
        WHERE n.as_is IN (SELECT as_is FROM taken)) a
  WHERE EXISTS (
    SELECT w.id FROM webhooks w
    WHERE (a.source IS NULL OR (SELECT count(*) FROM holding WHERE account = '*') > 16)
      AND (w.active AND w.owner_client_id IN (SELECT unnest($3::text[])) AND w.events && CASE WHEN a.as_is LIKE 'zoom.%' THEN ARRAY[a.as_is, 'zoom.*'] ELSE ARRAY[a.as_is] END AND (a.source IS NULL OR w.owner_client_id || E'\t*' IN (SELECT unnest($3::text[])) OR (coalesce(a.source->>'account_id', '') <> '' AND (w.owner_client_id || E'\t' || coalesce(a.source->>'account_id', '') IN (SELECT unnest($3::text[])) OR (coalesce(a.source->>'account_id', ''), w.owner_client_id) IN (SELECT ins.account_id, ins.installed_by FROM installations ins WHERE ins.status <> 'revoked')))))
    UNION ALL
    SELECT w.id
    FROM (SELECT h.client FROM holding h
          WHERE h.account = '*' OR (coalesce(a.source->>'account_id', '') <> '' AND h.account = coalesce(a.source->>'account_id', ''))
          UNION
          SELECT ins.installed_by FROM installations ins
          WHERE coalesce(a.source->>'account_id', '') <> '' AND ins.account_id = coalesce(a.source->>'account_id', '') AND ins.status <> 'revoked'
            AND ins.installed_by = ANY($3::text[])) h
    CROSS JOIN LATERAL (
      SELECT w.id FROM webhooks w
      WHERE w.active AND array_append(w.events, E'\t' || w.owner_client_id) @> ARRAY[E'\t' || h.client]
        AND array_append(w.events, E'\t' || w.owner_client_id) && CASE WHEN a.as_is LIKE 'zoom.%' THEN ARRAY[a.as_is, 'zoom.*'] ELSE ARRAY[a.as_is] END
      OFFSET 0) w
    WHERE a.source IS NOT NULL AND NOT (SELECT count(*) FROM holding WHERE account = '*') > 16)
),
planned AS (
  SELECT i.id, i.plan = 'publish' AND coalesce(r.webhooks, 0) <= $2 AS publish,
    (i.plan = 'done' OR (i.plan = 'publish' AND coalesce(r.webhooks, 0) <= $2))
      AND wa.as_is IS NULL AS done
  FROM input i
  LEFT JOIN reach r ON r.event_id = i.event_id
  LEFT JOIN watched wa
    ON wa.as_is = i.as_is AND wa.source IS NOT DISTINCT FROM CASE WHEN i.source IS NULL THEN NULL ELSE jsonb_build_object('account_id', i.source->'account_id') END
),
claimed AS (
  INSERT INTO inbound_event_keys (identity_key, received_at)
  SELECT identity_key, now() FROM input
  ON CONFLICT (identity_key) DO NOTHING
  RETURNING identity_key
),
stored AS (
  INSERT INTO inbound_events (id, event, identity_key, event_ts, account_id, payload,
                              tracking_id, download_token_encrypted, processed_at, raw_body,
                              trace_context, via)
  SELECT i.id, i.event, i.identity_key, i.event_ts, i.account_id, i.payload, i.tracking_id,
    CASE WHEN p.done THEN NULL ELSE i.download_token_encrypted END,
    CASE WHEN p.done THEN now() END, decode(i.raw_body, 'base64'), i.trace_context, i.via
  FROM input i JOIN planned p ON p.id = i.id
  WHERE i.id IN (SELECT DISTINCT ON (c.identity_key) n.id FROM claimed c
                 JOIN input n ON n.identity_key = c.identity_key ORDER BY c.identity_key, n.id)
  RETURNING id, processed_at
),
ek AS (
  INSERT INTO event_keys (idempotency_key, created_at)
  SELECT i.idempotency_key, i.created_at
  FROM stored s JOIN input i ON i.id = s.id JOIN planned p ON p.id = s.id
  WHERE p.publish AND NOT p.done AND i.idempotency_key IS NOT NULL
),
ev AS (
  INSERT INTO events (id, kind, data, source, idempotency_key, created_at, body, order_key,
                      order_ts)
  SELECT i.event_id, i.kind, i.data, i.source, i.idempotency_key, i.created_at, i.body,
    i.order_key, i.order_ts
  FROM stored s JOIN input i ON i.id = s.id JOIN planned p ON p.id = s.id
  WHERE p.publish
  RETURNING id
),
d AS (
  INSERT INTO deliveries (webhook_id, event_id, event, next_attempt_at, lease_until,
                          trace_context, order_key, order_ts)
  SELECT w.id, i.event_id, i.kind, now(),
    CASE WHEN NOT o.ordered THEN now() + make_interval(secs => i.lease_ms / 1000.0) END,
    i.trace_context, CASE WHEN o.ordered THEN i.order_key END,
    CASE WHEN o.ordered THEN i.order_ts END
  FROM ev JOIN input i ON i.event_id = ev.id
  JOIN matched m ON m.event_id = i.event_id
  JOIN webhooks w ON w.id = m.webhook_id AND (w.filter_path IS NULL OR jsonb_path_match(jsonb_build_object('id', i.event_id, 'event', i.kind, 'created_at', to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', i.data, 'source', i.source), w.filter_path, w.filter_vars))
  CROSS JOIN LATERAL (SELECT (w.ordering = 'meeting' AND i.order_key IS NOT NULL) AS ordered) o
  RETURNING id, event_id, webhook_id, lease_until, created_at
)
SELECT s.id, s.processed_at IS NOT NULL AS processed,
  coalesce(array_agg(d.id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS delivery_ids,
  coalesce(array_agg(d.webhook_id::text) FILTER (WHERE d.id IS NOT NULL), '{}') AS webhook_ids,
  json_agg(json_build_array(d.id, d.webhook_id, d.lease_until::text, d.created_at::text, w.owner_client_id, w.destination, w.url, w.url_encrypted, w.template, w.secret_encrypted, w.headers_encrypted, w.previous_secret_encrypted, w.previous_secret_expires_at, w.active, w.consecutive_failures))
    FILTER (WHERE d.lease_until IS NOT NULL) AS leased
FROM stored s JOIN input i ON i.id = s.id LEFT JOIN d ON d.event_id = i.event_id
LEFT JOIN webhooks w ON w.id = d.webhook_id AND d.lease_until IS NOT NULL
GROUP BY s.id, s.processed_at;

-- PgInboundEventStore.anyUnprocessed
SELECT id FROM inbound_events
  WHERE identity_key = ANY($1::text[]) AND processed_at IS NULL LIMIT 1;

-- PgInboundEventStore.beginRun
UPDATE inbound_events SET process_attempts = process_attempts + 1
  WHERE id = $1 AND processed_at IS NULL RETURNING process_attempts;
