/**
 * `npm run receiver [-- --port 4000 --secret … [--secret …]]`: a webhook receiver for trying
 * the service. It checks each POST's signatures in constant time against every secret given:
 * `x-service-signature` (hex HMAC-SHA256 of the raw body), `x-service-signature-previous` (the
 * same with the secret a rotation replaced, sent during its grace period) and the Standard
 * Webhooks `webhook-signature` (checked with the `standardwebhooks` library, timestamp
 * included). It prints what it verified and which signature and secret matched, and answers
 * 200; anything else is printed as refused, with what to check, and answered 401. Give
 * `--secret` twice (old and new) to follow a rotation from either side.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { standardWebhooksKey } from '../src/dispatcher/engine/delivery-signature';
import { TRYOUT } from './tryout-settings';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: String(TRYOUT.receiverPort) },
    secret: { type: 'string', multiple: true },
  },
});
const secrets = values.secret?.length ? values.secret : [TRYOUT.webhookSecret];

const header = (headers: IncomingHttpHeaders, name: string): string =>
  typeof headers[name] === 'string' ? (headers[name] as string) : '';

const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Which secret (1-based, as given) signed this hex HMAC of the body, if any. */
function hexMatch(body: Buffer, signature: string): number | undefined {
  if (!signature) return undefined;
  const index = secrets.findIndex((s) =>
    same(createHmac('sha256', s).update(body).digest('hex'), signature),
  );
  return index < 0 ? undefined : index + 1;
}

/**
 * The Standard Webhooks check, by the library: which secret verified it, and which of the
 * header's space-separated signatures (the current secret's first, then the previous one's).
 */
function standardMatch(
  body: Buffer,
  headers: IncomingHttpHeaders,
): { secret: number; signature: number } | undefined {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature').split(' ').filter(Boolean);
  if (!id || !timestamp || signatures.length === 0) return undefined;
  for (const [index, secret] of secrets.entries()) {
    const webhook = new Webhook(standardWebhooksKey(secret), { format: 'raw' });
    try {
      webhook.verify(body, {
        'webhook-id': id,
        'webhook-timestamp': timestamp,
        'webhook-signature': signatures.join(' '),
      });
    } catch {
      continue;
    }
    const mine = webhook.sign(id, new Date(Number(timestamp) * 1000), body);
    return { secret: index + 1, signature: signatures.findIndex((s) => same(s, mine)) + 1 };
  }
  return undefined;
}

const secretName = (n: number) =>
  secrets.length > 1 ? `secret ${n} of ${secrets.length}` : 'the secret';

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
    const current = hexMatch(body, header(req.headers, 'x-service-signature'));
    const previous = hexMatch(body, header(req.headers, 'x-service-signature-previous'));
    const standard = standardMatch(body, req.headers);
    if (req.method !== 'POST' || (current === undefined && previous === undefined)) {
      process.stdout.write(
        `REFUSED ${req.method} ${req.url}: neither x-service-signature nor ` +
          `x-service-signature-previous matches ${secrets.length > 1 ? 'any secret given' : 'the secret given'} ` +
          `(delivery ${delivery}, event ${event}). Was the webhook's secret rotated? Restart with ` +
          '--secret <the new secret> (give --secret twice to accept the old and the new)\n',
      );
      res.writeHead(401).end();
      return;
    }
    const matched = [
      current !== undefined ? `x-service-signature with ${secretName(current)}` : undefined,
      previous !== undefined
        ? `x-service-signature-previous with ${secretName(previous)}`
        : undefined,
      standard
        ? `webhook-signature #${standard.signature} with ${secretName(standard.secret)}`
        : 'webhook-signature: no match',
    ].filter(Boolean);
    const attempt = String(req.headers['x-service-attempt'] ?? '?');
    process.stdout.write(
      `verified delivery ${delivery} (attempt ${attempt}): ${event} [${matched.join('; ')}]\n`,
    );
    if (current === undefined) {
      process.stdout.write(
        "  only the previous secret matched: the webhook's secret was rotated, and the old one " +
          'signs only for the grace period. Restart with --secret <the new secret>\n',
      );
    }
    process.stdout.write(`${pretty(body)}\n`);
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
    `Receiver on ${url}, verifying signatures with ${secrets.map((s) => `"${s}"`).join(' and ')}.\n` +
      'Deliveries to the try-out webhook will be printed here.\n',
  );
});
