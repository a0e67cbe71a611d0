-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/attendance/queries.spec.ts; that spec fails when the code and this disagree.

-- AttendanceStore.due
SELECT uuid, changes::text AS changes FROM attendance
WHERE (changes > computed_changes OR revision > published_revision)
  AND (revision > published_revision OR settle_from <= now() - make_interval(secs => $1::int / 1000.0))
ORDER BY settle_from LIMIT $2;

-- AttendanceStore.state
SELECT uuid, account_id, changes::text AS changes, computed_changes::text AS computed_changes,
  revision, published_revision, digest
FROM attendance WHERE uuid = $1;

-- AttendanceStore.occurrence
SELECT event, event_ts::text AS event_ts, via, tracking_id,
  payload #>> '{payload,object,id}' AS id,
  payload #>> '{payload,object,topic}' AS topic,
  payload #>> '{payload,object,host_id}' AS host_id,
  payload #>> '{payload,object,start_time}' AS start_time,
  payload #>> '{payload,object,end_time}' AS end_time
FROM inbound_events
WHERE (payload #>> '{payload,object,uuid}') = $1 AND event IN ('meeting.ended', 'webinar.ended')
ORDER BY id LIMIT 1;

-- AttendanceStore.inputs
SELECT id, event LIKE '%left' AS left,
  CASE WHEN event LIKE '%left' THEN p ->> 'leave_time' ELSE p ->> 'join_time' END AS time,
  event_ts::text AS event_ts, p ->> 'user_id' AS user_id,
  p ->> 'participant_user_id' AS participant_user_id, p ->> 'email' AS email,
  p ->> 'user_name' AS user_name, p ->> 'registrant_id' AS registrant_id,
  p ->> 'customer_key' AS customer_key, p ->> 'participant_uuid' AS participant_uuid
FROM inbound_events, LATERAL (SELECT payload #> '{payload,object,participant}' AS p) x
WHERE (payload #>> '{payload,object,uuid}') = $1 AND event IN ('meeting.participant_joined', 'meeting.participant_left', 'webinar.participant_joined', 'webinar.participant_left') AND id > $2
ORDER BY id LIMIT $3;

-- AttendanceStore.save
UPDATE attendance SET revision = $3, digest = $4, data = $5::json, end_time = $6,
  computed_at = now(), computed_changes = $7, summary = $8::json
WHERE uuid = $1 AND revision = $2 AND computed_changes < $7
RETURNING revision;

-- AttendanceStore.saveUnchanged
UPDATE attendance SET computed_changes = $2 WHERE uuid = $1 AND computed_changes < $2;

-- AttendanceStore.published
UPDATE attendance SET published_revision = greatest(published_revision, $2) WHERE uuid = $1;

-- AttendanceStore.latest
SELECT data FROM attendance WHERE uuid = $1 AND revision > 0;

-- AttendanceStore.get
SELECT data, computed_at FROM attendance
WHERE uuid = $1 AND revision > 0 AND ($2::text[] IS NULL OR account_id = ANY($2::text[]));

-- AttendanceStore.list
SELECT id, uuid, revision, end_time, computed_at,
  summary -> 'id' AS meeting_id, summary -> 'topic' AS topic, summary -> 'host_id' AS host_id,
  summary -> 'start_time' AS start_time, summary -> 'duration_seconds' AS duration_seconds,
  summary -> 'participants_count' AS participants_count
FROM attendance
WHERE revision > 0 AND ($2::text[] IS NULL OR account_id = ANY($2::text[]))
  AND ($3::timestamptz IS NULL OR end_time >= $3) AND ($4::timestamptz IS NULL OR end_time < $4)
  AND ($5::timestamptz IS NULL OR (end_time, id) < ($5, $6::uuid))
ORDER BY end_time DESC, id DESC LIMIT $1;

-- AttendanceStore.purgeAccount
WITH a AS (DELETE FROM attendance WHERE account_id = $1 AND created_at <= $2 RETURNING 1)
SELECT count(*)::int AS attendance FROM a;
