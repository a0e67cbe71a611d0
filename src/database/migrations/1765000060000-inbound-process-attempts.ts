import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * inbound_events.process_attempts: how many times the inbound job began working the event. An
 * event that fails every run (or kills the process working it) was queued again by the sweeper
 * for ever; past INBOUND_MAX_RUNS runs it is now ended (docs/operations.md, "Inbound events
 * given up"). Counted in PostgreSQL, so restarts and Redis losing its jobs do not reset it. A
 * constant default: no table rewrite.
 */
export class InboundProcessAttempts1765000060000 implements MigrationInterface {
  name = 'InboundProcessAttempts1765000060000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE inbound_events ADD COLUMN process_attempts integer NOT NULL DEFAULT 0`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound_events DROP COLUMN process_attempts`);
  }
}
