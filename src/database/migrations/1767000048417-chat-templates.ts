import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat destinations and templates (docs/destinations.md#chat-tools, docs/templates.md):
 * - webhooks.template: the JSONata expression that shapes what the webhook is sent;
 * - webhooks.url_encrypted: a chat webhook's address is a credential, sealed like the secret,
 *   while `url` holds its masked form for answers and logs;
 * - deliveries.sent_body: the bytes a shaped delivery was first sent (a template's output or a
 *   chat tool's built-in message), which its later attempts and redeliveries send again; null
 *   for a delivery sent as its event's body, and cleared by a replay, which shapes again.
 * The destination's url rule now counts chat types as having a url, like http: the type names
 * are written out here (a migration imports nothing from outside src/database/).
 */
export class ChatTemplates1767000048417 implements MigrationInterface {
  name = 'ChatTemplates1767000048417';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN template text`);
    await q.query(`ALTER TABLE webhooks ADD COLUMN url_encrypted text`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_destination_url_ck`);
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_destination_url_ck
       CHECK ((destination->>'type' IN ('http', 'slack', 'teams', 'discord')) = (url IS NOT NULL))`,
    );
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_url_encrypted_ck
       CHECK ((url_encrypted IS NOT NULL) = (destination->>'type' IN ('slack', 'teams', 'discord')))`,
    );
    await q.query(`ALTER TABLE deliveries ADD COLUMN sent_body text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM webhooks WHERE destination->>'type' IN ('slack', 'teams', 'discord')`,
    );
    await q.query(`ALTER TABLE deliveries DROP COLUMN sent_body`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_url_encrypted_ck`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_destination_url_ck`);
    await q.query(
      `ALTER TABLE webhooks ADD CONSTRAINT webhooks_destination_url_ck
       CHECK ((destination->>'type' = 'http') = (url IS NOT NULL))`,
    );
    await q.query(`ALTER TABLE webhooks DROP COLUMN url_encrypted`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN template`);
  }
}
