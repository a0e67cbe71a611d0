/**
 * The baselines of bench/pipeline.ts: the least a pipeline with the app's promises has to do,
 * written plainly on the same libraries (node:http, pg, Bull, undici), one process each.
 *
 * - `durable`: verify the platform's HMAC, one batched INSERT of the inbound row and its
 *   delivery row (concurrent requests share the statement), answer 200, one Bull job per
 *   delivery (added per batch), and a worker that signs, POSTs and records the attempt in one
 *   batched statement. PostgreSQL is the record before the 200, as in the app.
 * - `ingest`: verify, one batched INSERT of the inbound row, 200; nothing else.
 * - `chain`: the raw Bull chain, no database and no HTTP front: on a message from the parent,
 *   jobs are added (at the concurrency asked) and worked: sign, POST.
 *
 * Spawned by bench/pipeline.ts with its settings in the environment; it reports its port (or
 * that the chain is ready) over IPC.
 */
import Bull from 'bull';
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { Agent, request } from 'undici';
import { INGEST_AND_DELIVERY_SQL, INGEST_SQL, RECORD_SQL, SCHEMA } from './minimal-sql';
import { now } from './support';

const MODE = process.argv[2] as 'durable' | 'ingest' | 'chain';
const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const CONCURRENCY = Number(process.env.DELIVERY_CONCURRENCY ?? 50);
const TOLERANCE_SECONDS = 300;

/** Calls made in one event-loop turn share one `run` (one statement, one commit). */
function batcher<I, O>(run: (items: I[]) => Promise<O[]>): (item: I) => Promise<O> {
  let pending: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  return (item) =>
    new Promise<O>((resolve, reject) => {
      if (pending.length === 0) {
        setImmediate(() => {
          const batch = pending;
          pending = [];
          run(batch.map((b) => b.item)).then(
            (out) => batch.forEach((b, i) => b.resolve(out[i])),
            (error: unknown) => batch.forEach((b) => b.reject(error)),
          );
        });
      }
      pending.push({ item, resolve, reject });
    });
}

interface DeliverJob {
  id: string;
  body: string;
}

/** The worker side shared by `durable` and `chain`: sign, POST, and (durable) record. */
function startWorker(
  queue: Bull.Queue<DeliverJob>,
  record?: (attempt: unknown[]) => Promise<void>,
) {
  const url = env('RECEIVER_URL');
  const secret = env('SUBSCRIBER_SECRET');
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
  void queue.process('deliver', CONCURRENCY, async (job) => {
    const startedAt = new Date();
    const t0 = now();
    const body = Buffer.from(job.data.body, 'utf8');
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'content-type': 'application/json',
        'x-service-signature': createHmac('sha256', secret).update(body).digest('hex'),
        'x-service-event': 'job.started',
        'x-service-delivery': job.data.id,
        'x-service-attempt': String(job.attemptsMade + 1),
      },
      body,
    });
    await res.body.dump();
    await record?.([job.data.id, res.statusCode, Math.round(now() - t0), startedAt]);
    if (res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
  });
}

function notificationBody(envelope: {
  event: string;
  event_ts: number;
  payload: { account_id: string; object: Record<string, unknown> };
}): string {
  const o = envelope.payload.object;
  return JSON.stringify({
    id: randomUUID(),
    event: 'job.started',
    created_at: new Date().toISOString(),
    data: {
      id: String(o.id),
      uuid: o.uuid,
      topic: o.topic,
      host_id: o.host_id,
      start_time: o.start_time,
    },
    source: {
      platform: 'zoom',
      event: envelope.event,
      event_ts: envelope.event_ts,
      account_id: envelope.payload.account_id,
    },
  });
}

function verified(req: IncomingMessage, body: Buffer, secret: string): boolean {
  const ts = String(req.headers['x-zm-request-timestamp'] ?? '');
  const given = Buffer.from(String(req.headers['x-zm-signature'] ?? ''));
  const expected = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${ts}:`).update(body).digest('hex')}`,
  );
  return (
    given.length === expected.length &&
    timingSafeEqual(given, expected) &&
    Math.abs(Date.now() / 1000 - Number(ts)) <= TOLERANCE_SECONDS
  );
}

async function serveHttp(): Promise<void> {
  const pool = new Pool({ connectionString: env('DATABASE_URL'), max: 10 });
  await pool.query(SCHEMA);
  const secret = env('ZOOM_SECRET_TOKEN');
  const queue =
    MODE === 'durable'
      ? new Bull<DeliverJob>('minimal', {
          redis: env('REDIS_URL'),
          prefix: env('QUEUE_PREFIX'),
          defaultJobOptions: { attempts: 4, removeOnComplete: true, removeOnFail: 1000 },
        })
      : null;

  type Row = { key: string; event: string; payload: string; body: string };
  const store = batcher<Row, string | null>(async (rows) => {
    if (queue === null) {
      const stored = await pool.query<{ identity_key: string }>(INGEST_SQL, [
        rows.map((r) => r.key),
        rows.map((r) => r.event),
        rows.map((r) => r.payload),
      ]);
      const keys = new Set(stored.rows.map((r) => r.identity_key));
      return rows.map((r) => (keys.has(r.key) ? r.key : null));
    }
    const stored = await pool.query<{ identity_key: string; delivery_id: string }>(
      INGEST_AND_DELIVERY_SQL,
      [
        rows.map((r) => r.key),
        rows.map((r) => r.event),
        rows.map((r) => r.payload),
        rows.map((r) => r.body),
      ],
    );
    const ids = new Map(stored.rows.map((r) => [r.identity_key, r.delivery_id]));
    const bodies = new Map(rows.map((r) => [r.key, r.body]));
    // After the commit and not awaited by the answers: the row is the record.
    void queue
      .addBulk(
        stored.rows.map((r) => ({
          name: 'deliver',
          data: { id: r.delivery_id, body: bodies.get(r.identity_key)! },
        })),
      )
      .catch((error: Error) => process.stderr.write(`addBulk: ${error.message}\n`));
    return rows.map((r) => ids.get(r.key) ?? null);
  });

  if (queue !== null) {
    const record = batcher<unknown[], void>(async (attempts) => {
      await pool.query(
        RECORD_SQL,
        [0, 1, 2, 3].map((c) => attempts.map((a) => a[c])),
      );
      return attempts.map(() => undefined);
    });
    startWorker(queue, record);
  }

  const answer = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (!verified(req, raw, secret)) return answer(res, 401, '{"statusCode":401}');
      let envelope: Parameters<typeof notificationBody>[0];
      try {
        envelope = JSON.parse(raw.toString('utf8')) as typeof envelope;
      } catch {
        return answer(res, 400, '{"statusCode":400}');
      }
      const text = raw.toString('utf8');
      store({
        key: `${envelope.event}:${String(envelope.payload.object.uuid)}`,
        event: envelope.event,
        payload: text,
        body: queue === null ? '' : notificationBody(envelope),
      }).then(
        (id) => answer(res, 200, id === null ? '{"status":"duplicate"}' : '{"status":"accepted"}'),
        (error: Error) => answer(res, 503, JSON.stringify({ message: error.message })),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  process.on('SIGTERM', () => {
    server.close();
    void Promise.all([queue?.close(), pool.end()]).then(() => process.exit(0));
  });
}

/** The raw chain: `{ burst: { tag, count, concurrency } }` adds jobs, answers their send times. */
function serveChain(): void {
  const queue = new Bull<DeliverJob>('chain', {
    redis: env('REDIS_URL'),
    prefix: env('QUEUE_PREFIX'),
    defaultJobOptions: { attempts: 4, removeOnComplete: true, removeOnFail: 1000 },
  });
  startWorker(queue);
  process.on(
    'message',
    (message: { burst: { tag: string; count: number; concurrency: number } }) => {
      const { tag, count, concurrency } = message.burst;
      const sent: [string, number][] = [];
      let next = 0;
      void Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            const uuid = `${tag}-${next++}`;
            const at = now();
            sent.push([uuid, at]);
            const body = notificationBody({
              event: 'meeting.started',
              event_ts: Date.now(),
              payload: { account_id: 'bench', object: { id: 1, uuid, topic: 'bench' } },
            });
            await queue.add('deliver', { id: randomUUID(), body });
          }
        }),
      ).then(() => process.send!({ sent }));
    },
  );
  void queue.isReady().then(() => process.send!({ ready: true }));
  process.on('SIGTERM', () => void queue.close().then(() => process.exit(0)));
}

if (MODE === 'chain') serveChain();
else if (MODE === 'durable' || MODE === 'ingest') void serveHttp();
else throw new Error(`mode must be durable, ingest or chain, not ${MODE}`);
