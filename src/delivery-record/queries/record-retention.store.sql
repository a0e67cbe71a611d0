-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- RecordRetentionStore.deleteBatch('deliveries')
WITH batch AS (
  SELECT id FROM deliveries
  WHERE created_at < $1 AND status <> 'pending' AND completed_at < $1
  ORDER BY created_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
),
a AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM batch) RETURNING 1),
d AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM batch) RETURNING 1)
SELECT (SELECT count(*) FROM d)::int AS deliveries,
       (SELECT count(*) FROM a)::int AS delivery_attempts;

-- RecordRetentionStore.deleteBatch('events')
WITH batch AS (
  SELECT e.id FROM events e
  WHERE e.created_at < $1
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
  ORDER BY e.created_at
  LIMIT $2
  FOR UPDATE SKIP LOCKED
),
e AS (DELETE FROM events WHERE id IN (SELECT id FROM batch) RETURNING 1)
SELECT (SELECT count(*) FROM e)::int AS events;

-- RecordRetentionStore.purgeAccount
WITH ev AS (
  SELECT id FROM events
  WHERE source IS NOT NULL AND source->>'account_id' = $1 AND created_at <= $2
),
dl AS (SELECT id FROM deliveries WHERE event_id IN (SELECT id FROM ev)),
a AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM dl) RETURNING 1),
d AS (DELETE FROM deliveries WHERE id IN (SELECT id FROM dl) RETURNING 1),
e AS (DELETE FROM events WHERE id IN (SELECT id FROM ev) RETURNING 1)
SELECT (SELECT count(*) FROM d)::int AS deliveries,
       (SELECT count(*) FROM a)::int AS delivery_attempts,
       (SELECT count(*) FROM e)::int AS events;

-- RecordRetentionStore.dropPartitions (deliveries)
SELECT EXISTS (
  SELECT 1 FROM <partition> WHERE status = 'pending' OR completed_at >= $1
) AS kept;

-- RecordRetentionStore.dropPartitions (events)
SELECT EXISTS (
  SELECT 1 FROM deliveries d JOIN <partition> e ON e.id = d.event_id WHERE d.status = 'pending'
) AS kept;

-- RecordRetentionStore.deleteKeysBatch
WITH k AS (
  DELETE FROM event_keys WHERE idempotency_key IN (
    SELECT idempotency_key FROM event_keys WHERE created_at < $1 LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM k;
