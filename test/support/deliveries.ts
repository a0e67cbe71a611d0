import { createHmac, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Json, request } from './http';
import { ReceivedRequest } from './receiver';
import { TestApp } from './test-app';
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
