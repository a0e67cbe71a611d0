/**
 * The tables and statements of the bench's baselines (bench/minimal-pipeline.ts), shared with
 * bench/ingest-statement.ts, which runs the same statements alone.
 */
export const SCHEMA = `
  CREATE TABLE IF NOT EXISTS inbound (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    identity_key text NOT NULL UNIQUE,
    event text NOT NULL,
    payload jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE IF NOT EXISTS deliveries (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    inbound_id uuid NOT NULL REFERENCES inbound (id),
    body text NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    attempt_count integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz
  );
  CREATE TABLE IF NOT EXISTS attempts (
    id bigserial PRIMARY KEY,
    delivery_id uuid NOT NULL REFERENCES deliveries (id),
    attempt integer NOT NULL,
    status_code integer,
    duration_ms integer NOT NULL,
    started_at timestamptz NOT NULL
  )`;

export const INGEST_SQL = `
  INSERT INTO inbound (identity_key, event, payload)
  SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
  ON CONFLICT (identity_key) DO NOTHING
  RETURNING identity_key`;

export const INGEST_AND_DELIVERY_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::text[])
      AS i(identity_key, event, payload, body)
  ),
  ins AS (
    INSERT INTO inbound (identity_key, event, payload)
    SELECT identity_key, event, payload FROM input
    ON CONFLICT (identity_key) DO NOTHING
    RETURNING id, identity_key
  ),
  d AS (
    INSERT INTO deliveries (inbound_id, body)
    SELECT ins.id, i.body FROM ins JOIN input i USING (identity_key)
    RETURNING id, inbound_id
  )
  SELECT ins.identity_key, d.id AS delivery_id FROM ins JOIN d ON d.inbound_id = ins.id`;

export const RECORD_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::timestamptz[])
      AS i(id, status_code, duration_ms, started_at)
  ),
  u AS (
    UPDATE deliveries d SET
      status = CASE WHEN i.status_code BETWEEN 200 AND 299 THEN 'succeeded' ELSE 'pending' END,
      attempt_count = d.attempt_count + 1,
      completed_at = now()
    FROM input i WHERE d.id = i.id
    RETURNING d.id, d.attempt_count
  )
  INSERT INTO attempts (delivery_id, attempt, status_code, duration_ms, started_at)
  SELECT i.id, u.attempt_count, i.status_code, i.duration_ms, i.started_at
  FROM input i JOIN u ON u.id = i.id`;
