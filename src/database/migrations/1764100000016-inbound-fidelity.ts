import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Inbound fidelity (docs/api.md#platform-events-post-zoomevents): the platform's x-zm-trackingid and the event's download_token
 * (encrypted, until the recording automation has copied it to the file links) stay with the
 * inbound event; recording_downloads holds, per file of an event-only deployment, the
 * platform's download URL and the encrypted token that opens it until it expires.
 */
export class InboundFidelity1764100000016 implements MigrationInterface {
  name = 'InboundFidelity1764100000016';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound_events ADD COLUMN tracking_id text`);
    await q.query(`ALTER TABLE inbound_events ADD COLUMN download_token_encrypted text`);
    await q.query(`
      CREATE TABLE recording_downloads (
        meeting_key text NOT NULL,
        file_ref text NOT NULL,
        download_url text NOT NULL,
        download_token_encrypted text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (meeting_key, file_ref)
      )`);
    await q.query(
      `CREATE INDEX recording_downloads_expires_idx ON recording_downloads (expires_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE recording_downloads`);
    await q.query(`ALTER TABLE inbound_events DROP COLUMN download_token_encrypted`);
    await q.query(`ALTER TABLE inbound_events DROP COLUMN tracking_id`);
  }
}
