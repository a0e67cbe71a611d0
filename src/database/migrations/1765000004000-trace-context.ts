import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * docs/operations.md. `trace_context`: the W3C traceparent a delivery's attempts (and an inbound event's
 * job) continue, so an attempt made by another process, hours later, joins the trace of the
 * request that brought its event; null while tracing is off. The partial index serves the
 * event lookup by the platform's tracking id (GET /api/events?tracking_id=), newest first;
 * the other filters ride on events_created_idx and, for "the caller's events", on
 * deliveries_event_webhook_uq.
 */
export class TraceContext1765000004000 implements MigrationInterface {
  name = 'TraceContext1765000004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deliveries ADD COLUMN trace_context text`);
    await q.query(`ALTER TABLE inbound_events ADD COLUMN trace_context text`);
    await q.query(
      `CREATE INDEX events_tracking_id_idx ON events ((source->>'tracking_id'), created_at DESC, id DESC)
       WHERE source->>'tracking_id' IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX events_tracking_id_idx`);
    await q.query(`ALTER TABLE inbound_events DROP COLUMN trace_context`);
    await q.query(`ALTER TABLE deliveries DROP COLUMN trace_context`);
  }
}
