import { DataSource } from 'typeorm';
import { SecretCipher } from '../../src/webhooks/secret-cipher';
import { TestApp } from './test-app';

export interface TestWebhook {
  id: string;
  url: string;
  secret: string;
}

let counter = 0;

/**
 * Registers a webhook for `client`.
 * TODO(issue-3): POST /api/webhooks once the webhooks CRUD is on main; until then the row is
 * inserted as that API would store it (secret encrypted under the app's key).
 */
export async function createWebhook(
  t: TestApp,
  options: { url: string; events?: string[]; client?: string; secret?: string; active?: boolean },
): Promise<TestWebhook> {
  const secret = options.secret ?? `whsec-test-${++counter}-0123456789abcdef`;
  const [row] = (await t.app.get(DataSource).query(
    `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint, active)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [
      options.client ?? 'alpha',
      options.url,
      options.events ?? ['job.started'],
      new SecretCipher(t.config).encrypt(secret),
      secret.slice(-4),
      options.active ?? true,
    ],
  )) as { id: string }[];
  return { id: row.id, url: options.url, secret };
}

/** TODO(issue-3): PATCH /api/webhooks/:id {active} once the webhooks CRUD is on main. */
export async function setWebhookActive(t: TestApp, id: string, active: boolean): Promise<void> {
  await t.app.get(DataSource).query(`UPDATE webhooks SET active = $2 WHERE id = $1`, [id, active]);
}

/** TODO(issue-3): DELETE /api/webhooks/:id once the webhooks CRUD is on main. */
export async function deleteWebhook(t: TestApp, id: string): Promise<void> {
  await t.app.get(DataSource).query(`DELETE FROM webhooks WHERE id = $1`, [id]);
}
