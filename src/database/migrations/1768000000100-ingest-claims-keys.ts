import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ingest statement is the one writer of inbound_events, and it claims each event's key in
 * inbound_event_keys before it stores the row (docs/operations.md#partitions). The insert
 * trigger that added the keys again cost every ingest a PL/pgSQL call and a unique-index probe
 * per row, each one finding the key just claimed (docs/benchmarks.md, "End to end after the fifth round's changes").
 * Re-keying an event (a migration's UPDATE of identity_key) still moves its key: that trigger
 * stays.
 */
export class IngestClaimsKeys1768000000100 implements MigrationInterface {
  name = 'IngestClaimsKeys1768000000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER inbound_events_keys ON inbound_events`);
    await q.query(`DROP FUNCTION inbound_event_keys_stored()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION inbound_event_keys_stored() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO inbound_event_keys (identity_key, received_at)
        SELECT identity_key, received_at FROM added
        ON CONFLICT (identity_key) DO NOTHING;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER inbound_events_keys AFTER INSERT ON inbound_events
      REFERENCING NEW TABLE AS added FOR EACH STATEMENT
      EXECUTE FUNCTION inbound_event_keys_stored()`);
  }
}
