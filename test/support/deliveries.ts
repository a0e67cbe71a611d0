import { createHmac, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Json, request } from './http';
import { ReceivedRequest } from './receiver';
import { TestApp } from './test-app';
import { queryDatabase } from './test-db';
import { waitFor } from './wait-for';

/** What a receiver does to verify a notification: HMAC over the raw bytes, constant-time compare. */
export function signatureVerifies(secret: string, req: ReceivedRequest): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(req.body).digest('hex'));
  const given = Buffer.from(String(req.headers['x-service-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A publish fans out to every active webhook of its kind (there are just six kinds): a case
 * that counts what its webhooks receive starts with all others inactive.
 */
export const deactivateAllWebhooks = (t: TestApp): Promise<unknown> =>
  t.app.get(DataSource).query(`UPDATE webhooks SET active = false`);

/** One delivery with its attempts, as GET /api/webhooks/:id/deliveries/:deliveryId shows it. */
export async function getDelivery(
  t: TestApp,
  token: string,
  webhookId: string,
  deliveryId: string,
): Promise<Json> {
  return (
    await request(t.baseUrl, 'GET', `/api/webhooks/${webhookId}/deliveries/${deliveryId}`, {
      token,
    })
  ).body;
}

/**
 * Polls the delivery log until `done` holds for the delivery; resolves to the delivery then. On
 * timeout the error carries the delivery as last seen (status, attempts, next attempt), so a
 * failure says whether it was never tried, tried and not recorded, or still pending.
 */
async function waitForDelivery(
  t: TestApp,
  token: string,
  webhookId: string,
  deliveryId: string,
  done: (delivery: Json) => boolean,
  what: string,
): Promise<Json> {
  let last: Json = null;
  try {
    return await waitFor(
      async () => {
        last = await getDelivery(t, token, webhookId, deliveryId);
        return done(last) && last;
      },
      { what },
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}; the delivery as last seen: ${JSON.stringify(last)}`,
    );
  }
}

/** Polls the delivery log until the delivery has `status`; resolves to the delivery then. */
export function waitForDeliveryStatus(
  t: TestApp,
  token: string,
  webhookId: string,
  deliveryId: string,
  status: string,
): Promise<Json> {
  return waitForDelivery(
    t,
    token,
    webhookId,
    deliveryId,
    (d) => d?.status === status,
    `delivery ${deliveryId} to be ${status}`,
  );
}

/** Polls the delivery log until the delivery has a recorded attempt; resolves to it then. */
export function waitForAttempt(
  t: TestApp,
  token: string,
  webhookId: string,
  deliveryId: string,
): Promise<Json> {
  return waitForDelivery(
    t,
    token,
    webhookId,
    deliveryId,
    (d) => d?.attempts?.length > 0,
    `an attempt of delivery ${deliveryId}`,
  );
}

interface DeliveryState {
  id: string;
  status: string;
  attempt_count: number;
  next_in_ms: number | null;
  lease_in_ms: number | null;
  last_error: string | null;
}

/**
 * Where deliveries stand, for a wait's failure: how many have each status, and of the others
 * why each waits (attempts made, when it is due and whether a lease still holds it, relative to
 * PostgreSQL's clock, and its last error).
 */
export async function deliveryStates(databaseUrl: string, ids: string[]): Promise<string> {
  const rows = await queryDatabase<DeliveryState>(
    databaseUrl,
    `SELECT id, status, attempt_count, last_error,
       round(extract(epoch FROM next_attempt_at - now()) * 1000)::int AS next_in_ms,
       round(extract(epoch FROM lease_until - now()) * 1000)::int AS lease_in_ms
     FROM deliveries WHERE id = ANY($1::uuid[]) ORDER BY id`,
    [ids],
  );
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
  const missing = ids.length - rows.length;
  const summary = [...counts].map(([status, n]) => `${n} ${status}`);
  if (missing > 0) summary.push(`${missing} gone`);
  const waiting = rows
    .filter((row) => row.status !== 'succeeded')
    .map(
      (row) =>
        `${row.id} ${row.status}, ${row.attempt_count} attempts, next attempt ` +
        `${row.next_in_ms === null ? 'none' : `in ${row.next_in_ms} ms`}, ` +
        (row.lease_in_ms !== null && row.lease_in_ms > 0
          ? `leased for ${row.lease_in_ms} ms more`
          : 'not leased') +
        (row.last_error ? `, last error: ${row.last_error}` : ''),
    );
  return (
    `${summary.join(', ')} of ${ids.length}` + (waiting.length ? `; ${waiting.join('; ')}` : '')
  );
}

/**
 * Polls until every one of `ids` has succeeded; on timeout the error says where each of the
 * others stood (deliveryStates), so a failure tells a late delivery from a lost one.
 */
export async function waitForDeliveriesSucceeded(
  databaseUrl: string,
  ids: string[],
  { timeoutMs = 60000, what = `all ${ids.length} deliveries to succeed` } = {},
): Promise<void> {
  try {
    await waitFor(
      async () => {
        const [{ n }] = await queryDatabase<{ n: number }>(
          databaseUrl,
          `SELECT count(*)::int AS n FROM deliveries
           WHERE id = ANY($1::uuid[]) AND status = 'succeeded'`,
          [ids],
        );
        return n === ids.length;
      },
      { timeoutMs, what },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; ${await deliveryStates(databaseUrl, ids)}`);
  }
}
