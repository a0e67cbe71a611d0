/**
 * `npm run receiver [-- --port 4000 --secret …]`: a webhook receiver for trying the service.
 * It checks each POST's x-service-signature (hex HMAC-SHA256 of the raw body, keyed with the
 * webhook's secret) in constant time, prints verified deliveries and answers 200; anything else
 * is printed as refused and answered 401.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { TRYOUT } from './tryout-settings';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: String(TRYOUT.receiverPort) },
    secret: { type: 'string', default: TRYOUT.webhookSecret },
  },
});
const secret = values.secret;

/** The check every receiver should make, before parsing the body. */
function verified(rawBody: Buffer, signature: string | string[] | undefined): boolean {
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(typeof signature === 'string' ? signature : '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function pretty(raw: Buffer): string {
  try {
    return JSON.stringify(JSON.parse(raw.toString('utf8')), null, 2);
  } catch {
    return raw.toString('utf8');
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const delivery = String(req.headers['x-service-delivery'] ?? '(none)');
    const event = String(req.headers['x-service-event'] ?? '(none)');
    if (req.method !== 'POST' || !verified(body, req.headers['x-service-signature'])) {
      process.stdout.write(
        `REFUSED ${req.method} ${req.url}: x-service-signature does not match this secret ` +
          `(delivery ${delivery}, event ${event})\n`,
      );
      res.writeHead(401).end();
      return;
    }
    const attempt = String(req.headers['x-service-attempt'] ?? '?');
    process.stdout.write(
      `verified delivery ${delivery} (attempt ${attempt}): ${event}\n${pretty(body)}\n`,
    );
    res.writeHead(200).end();
  });
});

server.on('error', (error: NodeJS.ErrnoException) => {
  process.stderr.write(
    error.code === 'EADDRINUSE'
      ? `Port ${values.port} is taken (another receiver still running?): stop it, or pass --port <another>.\n`
      : `Receiver failed: ${error.message}\n`,
  );
  process.exit(1);
});

server.listen(Number(values.port), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${Number(values.port)}/hook`;
  process.stdout.write(
    `Receiver on ${url}, verifying x-service-signature with the secret "${secret}".\n` +
      `Create a webhook with that url and secret; deliveries will be printed here.\n`,
  );
});
