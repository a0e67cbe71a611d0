/**
 * Cost of a page of GET /api/webhooks at increasing depth, through the real app on 127.0.0.1.
 * Keyset pages (cursor) should cost the same at any depth; the baseline, measured in the same
 * run on the same rows, is the OFFSET query a page-number API would need at that depth.
 *
 *   npx ts-node --transpile-only bench/webhooks-list.ts [rows=50000] [samples=100]
 */
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { encodeCursor } from '../src/common/cursor';
import { request } from '../test/support/http';
import { startTestApp } from '../test/support/test-app';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[rows=50000] [samples=100]');

const ROWS = Math.min(Number(process.argv[2] ?? 50_000), 500_000);
const SAMPLES = Math.min(Number(process.argv[3] ?? 100), 1_000);
const LIMIT = 50;
const DEADLINE = Date.now() + 5 * 60_000;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

async function time(label: string, run: () => Promise<void>): Promise<number> {
  await run(); // warm-up
  const took: number[] = [];
  for (let i = 0; i < SAMPLES && Date.now() < DEADLINE; i++) {
    const start = performance.now();
    await run();
    took.push(performance.now() - start);
  }
  const p50 = percentile(took, 0.5);
  console.log(
    `${label.padEnd(44)} p50 ${p50.toFixed(2).padStart(7)} ms  p95 ${percentile(took, 0.95)
      .toFixed(2)
      .padStart(7)} ms  (n=${took.length})`,
  );
  return p50;
}

async function main(): Promise<void> {
  const t = await startTestApp({ env: { LOG_LEVEL: 'warn' } });
  try {
    const db = t.app.get(DataSource);
    // Half the rows belong to the measured client, half to another (ownership filter at work).
    await db.query(
      `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint, created_at)
       SELECT CASE WHEN g % 2 = 0 THEN 'alpha' ELSE 'beta' END, 'https://hooks.example.com/x',
              ARRAY['job.started'], 'v1.x.x.x', 'xxxx',
              now() - (g / 3) * interval '1 millisecond'
       FROM generate_series(1, $1) AS g`,
      [ROWS],
    );
    await db.query('ANALYZE webhooks');
    const token = await t.token('alpha');
    const owned = ROWS / 2;
    console.log(`${ROWS} webhooks, ${owned} of them the caller's; pages of ${LIMIT}\n`);

    /** The position after the first `depth` rows of the caller's list. */
    const positionAt = async (depth: number) => {
      const [row] = await db.query(
        `SELECT created_at AS "createdAt", id FROM webhooks WHERE owner_client_id = 'alpha'
         ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1`,
        [depth - 1],
      );
      return row as { createdAt: Date; id: string };
    };
    const results: { depth: number; api: number; keyset: number; offset: number }[] = [];
    for (const depth of [0, Math.floor(owned / 10), owned - LIMIT]) {
      const after = depth === 0 ? null : await positionAt(depth);
      const path = `/api/webhooks?limit=${LIMIT}${after ? `&cursor=${encodeCursor(after)}` : ''}`;
      const api = await time(`API page at depth ${depth}`, async () => {
        const res = await request(t.baseUrl, 'GET', path, { token });
        if (res.status !== 200 || res.body.data.length !== LIMIT) throw new Error(res.text);
      });
      const keyset = await time(`  SQL keyset at depth ${depth}`, async () => {
        await db.query(
          `SELECT * FROM webhooks WHERE owner_client_id = 'alpha'
           ${after ? `AND (created_at, id) < ($2::timestamptz, $3::uuid)` : ''}
           ORDER BY created_at DESC, id DESC LIMIT $1`,
          after ? [LIMIT + 1, after.createdAt, after.id] : [LIMIT + 1],
        );
      });
      const offset = await time(`  SQL OFFSET baseline at depth ${depth}`, async () => {
        await db.query(
          `SELECT * FROM webhooks WHERE owner_client_id = 'alpha'
           ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT $1`,
          [LIMIT + 1, depth],
        );
      });
      results.push({ depth, api, keyset, offset });
    }
    const [first, , last] = results;
    console.log(
      `\nAPI deepest/first page: ${(last.api / first.api).toFixed(2)}x; ` +
        `SQL keyset deepest/first: ${(last.keyset / first.keyset).toFixed(2)}x; ` +
        `OFFSET baseline deepest/first: ${(last.offset / first.offset).toFixed(2)}x; ` +
        `OFFSET/keyset at the deepest page: ${(last.offset / last.keyset).toFixed(1)}x`,
    );
  } finally {
    await t.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
