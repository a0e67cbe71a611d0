import { DataSource } from 'typeorm';
import { SecretCipherService } from '../../src/webhooks/secret-cipher.service';
import { request } from './http';
import { ClientName, TestApp } from './test-app';

export interface TestWebhook {
  id: string;
  url: string;
  secret: string;
}

export interface WebhookOptions {
  url: string;
  events?: string[];
  client?: ClientName;
  secret?: string;
  active?: boolean;
  /** docs/receiving.md#ordered-delivery-per-meeting; left out of the request unless given. */
  ordering?: 'none' | 'meeting';
}

let counter = 0;
const tokens = new WeakMap<TestApp, Map<ClientName, Promise<string>>>();

function tokenOf(t: TestApp, client: ClientName): Promise<string> {
  let byClient = tokens.get(t);
  if (!byClient) tokens.set(t, (byClient = new Map()));
  let token = byClient.get(client);
  if (!token) byClient.set(client, (token = t.token(client)));
  return token;
}

async function call(t: TestApp, client: ClientName, method: string, path: string, body?: unknown) {
  const res = await request(t.baseUrl, method, path, { token: await tokenOf(t, client), body });
  if (res.status >= 300) {
    // A 500 says only "Internal server error": the app's own error lines say why.
    const why = res.status >= 500 ? t.logs.filter((l) => /error/i.test(l)).slice(-5) : [];
    throw new Error(
      `${method} ${path}: ${res.status} ${res.text}${why.map((l) => `\n${l}`).join('')}`,
    );
  }
  return res;
}

/** Registers a webhook for `client` through POST /api/webhooks (and PATCH for active: false). */
export async function createWebhook(t: TestApp, options: WebhookOptions): Promise<TestWebhook> {
  const client = options.client ?? 'alpha';
  const secret = options.secret ?? `whsec-test-${++counter}-0123456789abcdef`;
  const res = await call(t, client, 'POST', '/api/webhooks', {
    url: options.url,
    events: options.events ?? ['job.started'],
    secret,
    ...(options.ordering !== undefined && { ordering: options.ordering }),
  });
  const id = res.body.id as string;
  if (options.active === false) await setWebhookActive(t, id, false, client);
  return { id, url: options.url, secret };
}

/**
 * Stores a webhook row as it is, past the API's checks: a URL registered while private
 * addresses were allowed, or a client without webhooks:write.
 */
export async function insertWebhook(t: TestApp, options: WebhookOptions): Promise<TestWebhook> {
  const secret = options.secret ?? `whsec-test-${++counter}-0123456789abcdef`;
  const [row] = (await t.app.get(DataSource).query(
    `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint, active)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [
      options.client ?? 'alpha',
      options.url,
      options.events ?? ['job.started'],
      new SecretCipherService(t.config).encrypt(secret),
      secret.slice(-4),
      options.active ?? true,
    ],
  )) as { id: string }[];
  return { id: row.id, url: options.url, secret };
}

export async function setWebhookActive(
  t: TestApp,
  id: string,
  active: boolean,
  client: ClientName = 'alpha',
): Promise<void> {
  await call(t, client, 'PATCH', `/api/webhooks/${id}`, { active });
}

export async function deleteWebhook(
  t: TestApp,
  id: string,
  client: ClientName = 'alpha',
): Promise<void> {
  await call(t, client, 'DELETE', `/api/webhooks/${id}`);
}
