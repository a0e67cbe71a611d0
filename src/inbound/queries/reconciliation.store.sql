-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/inbound/queries.spec.ts; that spec fails when the code and this disagree.

-- ReconciliationStore.create
INSERT INTO reconciliation_runs (trigger, since, until, dry_run, account_id)
  VALUES ($1, $2, $3, $4, $5)
  RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.get
SELECT id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at FROM reconciliation_runs WHERE id = $1;

-- ReconciliationStore.list
SELECT id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at FROM reconciliation_runs
  WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::uuid)
  ORDER BY created_at DESC, id DESC LIMIT $3;

-- ReconciliationStore.start
UPDATE reconciliation_runs SET status = 'running', started_at = coalesce(started_at, now()),
    checked = '{"meetings":0,"webinars":0,"participants":0,"recordings":0}'
  WHERE id = (SELECT id FROM reconciliation_runs WHERE status IN ('queued', 'running')
                AND coalesce(account_id, '') <> ALL($1::text[])
              ORDER BY created_at, id LIMIT 1)
  RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.progress
UPDATE reconciliation_runs SET checked = $2, missing = $3, created = $4, errors = $5
  WHERE id = $1 AND status = 'running';

-- ReconciliationStore.finish
UPDATE reconciliation_runs SET status = $2, finished_at = now(), checked = $3, missing = $4,
    created = $5, errors = $6
  WHERE id = $1 AND status = 'running' RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.end
UPDATE reconciliation_runs SET status = 'failed', finished_at = now(), announced = $3,
    errors = errors || jsonb_build_array(jsonb_build_object(
      'source', 'run', 'status', NULL, 'message', $2::text))
  WHERE id = $1 AND status IN ('queued', 'running') RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.interrupted
WITH before AS (
    SELECT id, errors @> $2::jsonb OR (
      SELECT count(*) FROM jsonb_array_elements(errors) e
      WHERE e->>'source' = 'run' AND e->>'message' LIKE 'interrupted: %') >= $3 - 1 AS last
    FROM reconciliation_runs WHERE id = $1 AND status = 'running' FOR UPDATE
  )
  UPDATE reconciliation_runs r
  SET errors = CASE WHEN r.errors @> $2::jsonb THEN r.errors ELSE r.errors || $2::jsonb END,
      status = CASE WHEN before.last THEN 'failed' ELSE r.status END,
      finished_at = CASE WHEN before.last THEN now() ELSE r.finished_at END
  FROM before WHERE r.id = before.id RETURNING r.id, r.trigger, r.account_id, r.since, r.until, r.dry_run, r.status, r.started_at, r.finished_at, r.checked,
r.missing, r.created, r.errors, r.created_at;

-- ReconciliationStore.statusOf
SELECT status FROM reconciliation_runs WHERE id = $1;

-- ReconciliationStore.announceable
UPDATE reconciliation_runs SET announced = true
  WHERE id IN (SELECT id FROM reconciliation_runs WHERE NOT announced
               ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED)
  RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.schedule
INSERT INTO reconciliation_runs (trigger, since, until, account_id)
  SELECT 'schedule', $1, $2, a.account_id
  FROM unnest($4::text[]) AS a(account_id)
  WHERE NOT EXISTS (SELECT 1 FROM reconciliation_runs r
                    WHERE r.trigger = 'schedule'
                      AND r.account_id IS NOT DISTINCT FROM a.account_id
                      AND r.created_at > now() - $3 * interval '1 ms')
  RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.scheduleGaps
WITH pending AS (
    SELECT id, started_at, coalesce(ended_at, 'infinity') AS ended_at FROM inbound_gaps
    WHERE reconciliation_id IS NULL ORDER BY started_at, id LIMIT 1000
  ),
  ordered AS (
    SELECT *, max(ended_at) OVER (ORDER BY started_at, id
                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
    FROM pending
  ),
  islands AS (
    SELECT id, started_at, ended_at,
      sum(CASE WHEN before IS NULL OR started_at > before + interval '60 s' THEN 1 ELSE 0 END)
        OVER (ORDER BY started_at, id) AS island
    FROM ordered
  ),
  due AS (
    SELECT island, min(started_at) AS since, max(ended_at) AS until, uuid_v7() AS run_id
    FROM islands GROUP BY island
    HAVING max(ended_at) < now() - $1 * interval '1 ms'
  ),
  marked AS (
    UPDATE inbound_gaps g SET reconciliation_id = due.run_id
    FROM islands JOIN due USING (island) WHERE g.id = islands.id
  )
  INSERT INTO reconciliation_runs (id, trigger, since, until)
  SELECT run_id, 'gap', since - interval '60 s', until + interval '60 s' FROM due
  RETURNING id, trigger, account_id, since, until, dry_run, status, started_at, finished_at, checked,
missing, created, errors, created_at;

-- ReconciliationStore.storedKeys
SELECT identity_key FROM inbound_events WHERE identity_key = ANY($1::text[]);
