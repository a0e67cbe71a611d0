-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/delivery-record/queries.spec.ts; that spec fails when the code and this disagree.

-- PgReceiverHealthStore.countFailure
UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 WHERE id = $1
       RETURNING consecutive_failures;

-- PgReceiverHealthStore.resetFailures
UPDATE webhooks SET consecutive_failures = 0 WHERE id = $1 AND consecutive_failures <> 0;

-- PgReceiverHealthStore.disable
WITH w AS (
  UPDATE webhooks SET active = false, disabled_reason = $2, disabled_at = now(),
    updated_at = now()
  WHERE id = $1 AND active
  RETURNING id
),
f AS (
  UPDATE deliveries d SET status = 'failed', last_error = $3, next_attempt_at = NULL,
    completed_at = now(), updated_at = now()
  FROM w WHERE d.webhook_id = w.id AND d.status = 'pending'
  RETURNING d.id
)
SELECT (SELECT count(*) FROM w)::int AS disabled, (SELECT count(*) FROM f)::int AS failed;
