import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        owner_client_id text NOT NULL,
        url text NOT NULL,
        events text[] NOT NULL,
        secret_encrypted text NOT NULL,
        secret_hint text NOT NULL,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Fan-out reads "active webhooks subscribed to kind X"; listing reads one owner's page.
    await q.query(
      `CREATE INDEX webhooks_active_events_idx ON webhooks USING gin (events) WHERE active`,
    );
    await q.query(
      `CREATE INDEX webhooks_owner_page_idx ON webhooks (owner_client_id, created_at DESC, id DESC)`,
    );

    await q.query(`
      CREATE TABLE inbound_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event text NOT NULL,
        identity_key text NOT NULL,
        event_ts bigint,
        account_id text,
        payload jsonb NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now(),
        processed_at timestamptz,
        process_error text,
        CONSTRAINT inbound_events_identity_key_uq UNIQUE (identity_key)
      )`);
    await q.query(
      `CREATE INDEX inbound_events_unprocessed_idx ON inbound_events (received_at) WHERE processed_at IS NULL`,
    );

    await q.query(`
      CREATE TABLE events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        kind text NOT NULL,
        data jsonb NOT NULL,
        source jsonb,
        idempotency_key text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT events_idempotency_key_uq UNIQUE (idempotency_key)
      )`);

    await q.query(`
      CREATE TABLE deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id uuid NOT NULL REFERENCES events (id) ON DELETE CASCADE,
        event text NOT NULL,
        body text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempt_count integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        last_status_code integer,
        last_error text,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX deliveries_webhook_page_idx ON deliveries (webhook_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX deliveries_due_idx ON deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX deliveries_event_idx ON deliveries (event_id)`);

    await q.query(`
      CREATE TABLE delivery_attempts (
        id bigserial PRIMARY KEY,
        delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        error text,
        response_body text
      )`);
    await q.query(
      `CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id, attempt)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE delivery_attempts`);
    await q.query(`DROP TABLE deliveries`);
    await q.query(`DROP TABLE events`);
    await q.query(`DROP TABLE inbound_events`);
    await q.query(`DROP TABLE webhooks`);
  }
}
