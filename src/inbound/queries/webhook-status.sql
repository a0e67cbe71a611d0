-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/inbound/queries.spec.ts; that spec fails when the code and this disagree.

-- WebhookStatus.read
SELECT received_at FROM inbound_events WHERE via = $1 ORDER BY received_at DESC LIMIT 1;
