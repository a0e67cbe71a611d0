import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The platform WebSocket's record (docs/inbound-sources.md): one row that outlives every
 * process, so that a deployment started again knows when its socket last heard the platform
 * and opens the gap from there; and at most one open gap at a time, whichever process writes.
 */
export class WebsocketSource1766000039000 implements MigrationInterface {
  name = 'WebsocketSource1766000039000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE inbound_socket_state (
      id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
      holder text NULL,
      state text NOT NULL DEFAULT 'connecting' CHECK (state IN ('connecting', 'connected')),
      connected_since timestamptz NULL,
      last_frame_at timestamptz NULL,
      reconnects bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(
      `CREATE UNIQUE INDEX inbound_gaps_one_open ON inbound_gaps ((true)) WHERE ended_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX inbound_gaps_one_open`);
    await q.query(`DROP TABLE inbound_socket_state`);
  }
}
