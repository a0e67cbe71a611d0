import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every filter a webhook has had, from when (docs/api.md, "Filters"): a replay of missed events
 * must not send what the filter of the time declined, even after a PATCH changed or removed it.
 * Kept by a trigger on webhooks, so every writer (API, CLI, a hand-run UPDATE) records it and
 * the fan-out's hot path writes nothing for the events a filter declines. A row holds the
 * compiled filter from valid_from until the next row of its webhook; a webhook that exists now
 * gets one row from its creation with the filter it has.
 */
export class WebhookFilterHistory1766000037140 implements MigrationInterface {
  name = 'WebhookFilterHistory1766000037140';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_filters (
        webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        valid_from timestamptz NOT NULL,
        filter_path jsonpath,
        filter_vars jsonb,
        PRIMARY KEY (webhook_id, valid_from)
      )`);
    // created_at is rounded to the millisecond, now() is not: the first row starts at the
    // earlier of the two, so that no event of the webhook's first millisecond finds none.
    await q.query(`
      CREATE FUNCTION webhook_filters_record() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO webhook_filters (webhook_id, valid_from, filter_path, filter_vars)
        VALUES (NEW.id, CASE WHEN TG_OP = 'INSERT' THEN least(now(), NEW.created_at) ELSE now() END,
                NEW.filter_path, NEW.filter_vars)
        ON CONFLICT (webhook_id, valid_from) DO UPDATE
          SET filter_path = EXCLUDED.filter_path, filter_vars = EXCLUDED.filter_vars;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER webhook_filters_on_insert AFTER INSERT ON webhooks
      FOR EACH ROW EXECUTE FUNCTION webhook_filters_record()`);
    // jsonpath has no equality operator: its text is compared.
    await q.query(`
      CREATE TRIGGER webhook_filters_on_update AFTER UPDATE OF filter_path, filter_vars ON webhooks
      FOR EACH ROW WHEN (OLD.filter_path::text IS DISTINCT FROM NEW.filter_path::text
                         OR OLD.filter_vars IS DISTINCT FROM NEW.filter_vars)
      EXECUTE FUNCTION webhook_filters_record()`);
    await q.query(`
      INSERT INTO webhook_filters (webhook_id, valid_from, filter_path, filter_vars)
      SELECT id, created_at, filter_path, filter_vars FROM webhooks`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhook_filters_on_update ON webhooks`);
    await q.query(`DROP TRIGGER webhook_filters_on_insert ON webhooks`);
    await q.query(`DROP FUNCTION webhook_filters_record()`);
    await q.query(`DROP TABLE webhook_filters`);
  }
}
