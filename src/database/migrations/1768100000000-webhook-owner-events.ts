import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Active webhooks by owner and kind, for the fan-out of an event of one platform account
 * (docs/accounts.md#whose-events): it finds the clients that hold the account first, then each
 * one's webhooks of the event's kind, rather than every webhook of the kind. PostgreSQL needs no
 * extension for this one (docs/deployment.md: none is required), so it is a GIN index over the
 * webhook's kinds with one more entry naming its owner: a tab, then the client id (no kind has a
 * tab). `@> ARRAY[tab || client]` with `&& kinds` on the same expression intersect the owner's
 * few entries with the kind's in the index, without reading the kind's other webhooks.
 * `fastupdate = off`: webhooks are written seldom and this index is searched for every event,
 * and a pending list (rows not yet merged into the index until a vacuum) is read in full by
 * every search: 1,000 webhooks just created doubled the ingest statement's time.
 *
 * The expression is written here as the fan-out's statements write it
 * (src/delivery-record/fan-out-rule.ts), not imported: migrations import nothing outside
 * src/database.
 */
export class WebhookOwnerEvents1768100000000 implements MigrationInterface {
  name = 'WebhookOwnerEvents1768100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX webhooks_active_owner_events_idx ON webhooks
         USING gin ((array_append(events, E'\\t' || owner_client_id))) WITH (fastupdate = off)
         WHERE active`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhooks_active_owner_events_idx`);
  }
}
