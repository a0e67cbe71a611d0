/**
 * `npm run tryout`: the service as `npm start` runs it, set up for trying it on one machine:
 * an API client holding every scope (queues:admin too), loopback receivers allowed, and a
 * platform secret token that `npm run send-event` signs with. PORT, DATABASE_URL, REDIS_URL,
 * QUEUE_PREFIX and LOG_LEVEL are taken from the environment when set.
 */
import { SCOPES } from '../src/config/config.types';
import { TRYOUT } from './tryout-settings';

const tryoutEnv: Record<string, string> = {
  // Development: the built-in keys for tokens and stored secrets are fine here.
  NODE_ENV: 'development',
  AUTH_CLIENTS: JSON.stringify([
    { client_id: TRYOUT.clientId, client_secret: TRYOUT.clientSecret, scopes: SCOPES.join(' ') },
  ]),
  // The receiver listens on 127.0.0.1, which the SSRF policy refuses by default.
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  ZOOM_WEBHOOK_SECRET_TOKEN: TRYOUT.zoomSecretToken,
};
Object.assign(process.env, tryoutEnv);
process.env.PORT ??= String(TRYOUT.servicePort);
const port = Number(process.env.PORT);
const base = `http://localhost:${port}`;

async function announceWhenLive(): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/live`)).ok) break;
    } catch {
      // Not listening yet: migrations and queues come first.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  process.stdout.write(
    [
      '',
      `Try-out service on ${base} (NOT for production: every secret here is public)`,
      `  API client: ${TRYOUT.clientId} / ${TRYOUT.clientSecret} (every scope)`,
      `  Swagger UI: ${base}/docs   queue dashboard: ${base}/admin/queues`,
      `  platform secret token: ${TRYOUT.zoomSecretToken}`,
      '  loopback webhook URLs allowed (WEBHOOK_ALLOW_PRIVATE_URLS=true)',
      'Next, in another terminal: npm run receiver',
      '',
    ].join('\n'),
  );
}

// main.ts reads the environment as it loads, so it is loaded only now.
void import('../src/main').then(announceWhenLive);
