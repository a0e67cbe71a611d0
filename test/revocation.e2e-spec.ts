import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { waitForDeliveryStatus } from './support/deliveries';
import { request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { createTestDatabase, TestDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';

/**
 * docs/api.md#receiver-health: a client removed from AUTH_CLIENTS is locked out from the next start of a process
 * that reads the new list; its webhooks are kept and receive again once it returns.
 */
describe('revocation through AUTH_CLIENTS', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  let t: TestApp | undefined;

  beforeAll(async () => {
    [database, receiver] = await Promise.all([createTestDatabase(), startReceiver()]);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([receiver.close(), database.drop()]);
  });

  /** (Re)starts the app over the same database with this list of clients. */
  const restart = async (clients: object[]) => {
    await t?.close();
    t = await startTestApp({ database, env: { AUTH_CLIENTS: JSON.stringify(clients) } });
    return t;
  };
  const publish = async (app: TestApp) =>
    (await app.app.get(DispatcherService).publish({ kind: 'job.started', data: {} })).deliveryIds;

  it('refuses a removed client, cuts scopes, sends its webhooks nothing, and restores them when it returns', async () => {
    let app = await restart([CLIENTS.alpha, CLIENTS.beta]);
    const alphaToken = await app.token('alpha');
    const betaToken = await app.token('beta');
    const betaRoute = receiver.route();
    const alphaRoute = receiver.route();
    const betaHook = await createWebhook(app, { url: betaRoute.url, client: 'beta' });
    const alphaHook = await createWebhook(app, { url: alphaRoute.url });

    // beta removed; alpha keeps only webhooks:read.
    app = await restart([{ ...CLIENTS.alpha, scopes: 'webhooks:read' }]);
    const api = (method: string, path: string, token: string, body?: unknown) =>
      request(app.baseUrl, method, path, { token, body });

    expect((await api('GET', '/api/webhooks', betaToken)).status).toBe(401);
    expect((await api('GET', `/api/webhooks/${alphaHook.id}`, alphaToken)).status).toBe(200);
    // The token still names webhooks:write, but alpha no longer holds it.
    const write = await api('PATCH', `/api/webhooks/${alphaHook.id}`, alphaToken, {
      active: true,
    });
    expect(write.status).toBe(403);

    const delivered = await publish(app);
    expect(delivered).toHaveLength(1);
    await waitForDeliveryStatus(app, alphaToken, alphaHook.id, delivered[0], 'succeeded');
    expect(receiver.requests(betaRoute.path)).toHaveLength(0);

    // beta returns: its webhook was kept and receives again.
    app = await restart([CLIENTS.alpha, CLIENTS.beta]);
    const returned = await app.token('beta');
    expect((await api('GET', `/api/webhooks/${betaHook.id}`, returned)).status).toBe(200);
    expect(await publish(app)).toHaveLength(2);
    await waitFor(
      () =>
        receiver.requests(betaRoute.path).length === 1 &&
        receiver.requests(alphaRoute.path).length === 2,
      { what: 'one delivery to each webhook' },
    );
  });
});
