-- Every statement of this store as PostgreSQL receives it (leading indentation aside).
-- Written by UPDATE_QUERIES=1 npx jest src/inbound/queries.spec.ts; that spec fails when the code and this disagree.

-- SocketRecordStore.connecting, .connected
INSERT INTO inbound_socket_state (id, holder, state, connected_since, reconnects, updated_at)
VALUES (1, $1, $2, $3, $4, now())
ON CONFLICT (id) DO UPDATE SET
  holder = EXCLUDED.holder,
  state = EXCLUDED.state,
  connected_since = EXCLUDED.connected_since,
  reconnects = inbound_socket_state.reconnects + $4,
  updated_at = now();

-- SocketRecordStore.read
SELECT holder, state, connected_since, last_frame_at, reconnects
  FROM inbound_socket_state WHERE id = 1;

-- SocketRecordStore.frameSeen
UPDATE inbound_socket_state SET last_frame_at = greatest(last_frame_at, $1), updated_at = now()
  WHERE id = 1;

-- SocketRecordStore.openGap
WITH held AS (
    SELECT EXISTS (SELECT 1 FROM inbound_socket_state
                    WHERE id = 1 AND state = 'connected' AND holder IS DISTINCT FROM $2::text) AS held
  ), opened AS (
    INSERT INTO inbound_gaps (started_at)
    SELECT $1::timestamptz FROM held WHERE NOT held.held
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT EXISTS (SELECT 1 FROM opened) AS opened, (SELECT held FROM held) AS held;

-- SocketRecordStore.openGapFromLastFrame
INSERT INTO inbound_gaps (started_at)
  SELECT last_frame_at FROM inbound_socket_state WHERE id = 1 AND last_frame_at IS NOT NULL
  ON CONFLICT DO NOTHING;

-- SocketRecordStore.endGap
UPDATE inbound_gaps SET ended_at = greatest($1, started_at) WHERE ended_at IS NULL;

-- SocketRecordStore.latestGaps
SELECT started_at, ended_at, reconciliation_id FROM inbound_gaps
  ORDER BY started_at DESC, created_at DESC LIMIT $1;
