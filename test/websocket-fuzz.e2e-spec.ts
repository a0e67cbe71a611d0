import fc from 'fast-check';
import { meetingStarted, meetingUuid } from '../scripts/platform/zoom-events';
import { MAX_FRAME_BYTES } from '../src/inbound/sources/websocket/platform-socket';
import { FakeZoom } from './support/fake-zoom';
import { fuzzSettings } from './support/fuzz-settings';
import { FakeConnection, FakeZoomWs } from './support/fake-zoom-ws';
import { SpawnedApp, SpawnedWorker, spawnTestMs, startWorker } from './support/spawn-app';
import { CLIENTS, TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

/**
 * Property: whatever frames the platform's socket sends (random JSON, content nested up to
 * 100,000 deep, frames up to the 1 MiB limit and past it, binary bytes, the same frame again
 * and again), the process holding the socket lives, stores each frame it read exactly once
 * (accepted, duplicate or unmappable), and its memory stays bounded: sampled from the holder's
 * own /metrics (a spawned worker, so nothing of the test is counted) after every case.
 *
 * The suite runs 30 cases from seed 46; `npm run fuzz` more (300 at most: each case pushes up to
 * 8 MiB), as fuzzSettings says.
 */
const { runs, seed, path } = fuzzSettings(30, 46, 300);
/**
 * How far the holder's memory may rise above what it used after the first cases. One case
 * pushes at most 8 MiB of frames; the bug this guards against took 1.1 GB for one 94 MB frame.
 */
const RSS_GROWTH_LIMIT = 256 * 1024 * 1024;
const HEAP_GROWTH_LIMIT = 128 * 1024 * 1024;

const message = (content: string): string => `{"module":"message","content":${content}}`;
const deep = (depth: number, kind: 'array' | 'object'): string =>
  kind === 'array'
    ? '['.repeat(depth) + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const repeated = message(JSON.stringify(JSON.stringify(meetingStarted(meetingUuid(46)))));

/** One frame the holder must store: text or bytes. */
const frameArbitrary: fc.Arbitrary<string | Buffer> = fc.oneof(
  // An event whose payload is any JSON, as text and as a JSON value.
  fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), fc.nat()).map(([payload, asText, n]) => {
    const event = JSON.stringify({ event: 'meeting.started', event_ts: n, payload });
    return message(asText ? JSON.stringify(event) : event);
  }),
  // Content that is any JSON (mostly no event at all).
  fc.jsonValue({ maxDepth: 3 }).map((v) => message(JSON.stringify(JSON.stringify(v)))),
  // Deep: as a JSON value and as text, within the frame limit.
  fc
    .tuple(
      fc.integer({ min: 65, max: 100_000 }),
      fc.constantFrom<'array' | 'object'>('array', 'object'),
      fc.boolean(),
    )
    .map(([depth, kind, asText]) => {
      const json = deep(depth, kind);
      return message(asText ? JSON.stringify(json) : json);
    }),
  // Huge, up to just under the limit.
  fc
    .integer({ min: 100_000, max: MAX_FRAME_BYTES - 100 })
    .map((n) => message(JSON.stringify('x'.repeat(n)))),
  // Not JSON at all, and bytes that are not text.
  fc.string({ maxLength: 200 }).map((s) => `~${s}`),
  fc
    .uint8Array({ minLength: 0, maxLength: 2000 })
    .map((b) => Buffer.concat([Buffer.from([0xff]), Buffer.from(b)])),
  // The same frame again and again.
  fc.constant(repeated),
  fc.constant(Buffer.from(repeated)),
);

/** Events the holder stored (or found already stored), whatever their name. */
async function storedCount(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('inbound_events_total{') &&
        l.includes('via="websocket"') &&
        /outcome="(?:accepted|duplicate|unmappable)"/.test(l),
    )
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function memoryOf(baseUrl: string): Promise<{ rss: number; heap: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const sample = (name: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${name} `))
        ?.split(' ')[1] ?? NaN,
    );
  return {
    rss: sample('process_resident_memory_bytes'),
    heap: sample('nodejs_heap_size_used_bytes'),
  };
}

describe('WebSocket source: property over random, deep, huge and repeating frames', () => {
  let zoom: FakeZoom;
  let platform: FakeZoomWs;
  let t: TestApp;
  let holder: SpawnedWorker;
  const workers: SpawnedApp[] = [];

  const acknowledged = (after: number): Promise<FakeConnection> =>
    waitFor(
      () => {
        const c = platform.current;
        return c !== null && c.acknowledged && platform.connections.length > after && c;
      },
      { timeoutMs: 60_000, what: `an acknowledged socket (after ${after})` },
    );

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    platform = await FakeZoomWs.start({ acceptsToken: (token) => zoom.acceptsToken(token) });
    const env = {
      ...zoom.env(),
      // Heartbeats 5 s apart: a stall of a loaded machine must not close the socket.
      ...platform.env(5000),
      AUTH_CLIENTS: JSON.stringify(Object.values(CLIENTS)),
      RECONCILE_INTERVAL_MS: '0',
    };
    t = await startTestApp({ env: { APP_ROLE: 'api', ...env } });
    holder = await startWorker(t, { env, workers });
  }, spawnTestMs(1));
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exit));
    await t?.close();
    await platform?.close();
    await zoom?.close();
  });

  it(
    'lives, stores every frame it read once, and keeps its memory bounded',
    async () => {
      await acknowledged(0);
      let baseline: { rss: number; heap: number } | null = null;
      const peak = { rss: 0, heap: 0 };
      let cases = 0;
      console.log(`websocket fuzz: ${runs} runs, seed ${seed}`);
      await fc.assert(
        fc.asyncProperty(
          fc.array(frameArbitrary, { minLength: 1, maxLength: 8 }),
          async (frames) => {
            const before = await storedCount(holder.url);
            for (const frame of frames) platform.pushFrame(frame);
            await waitFor(async () => (await storedCount(holder.url)) === before + frames.length, {
              timeoutMs: 60_000,
              what: `${frames.length} frames stored`,
            });
            const memory = await memoryOf(holder.url);
            cases++;
            // After a few cases the runtime has grown its heap to what this load needs.
            if (cases === 3) baseline = memory;
            peak.rss = Math.max(peak.rss, memory.rss);
            peak.heap = Math.max(peak.heap, memory.heap);
            if (baseline !== null) {
              expect(memory.rss - baseline.rss).toBeLessThan(RSS_GROWTH_LIMIT);
              expect(memory.heap - baseline.heap).toBeLessThan(HEAP_GROWTH_LIMIT);
            }
          },
        ),
        { numRuns: runs, seed, path, endOnFailure: true },
      );
      // Past the limit, three in a row: each closes the socket unread, none is stored.
      const stored = await storedCount(holder.url);
      for (let i = 0; i < 3; i++) {
        const count = platform.connections.length;
        const connection = await acknowledged(count - 1);
        platform.pushFrame(message(JSON.stringify('y'.repeat(8 * MAX_FRAME_BYTES))));
        await waitFor(() => connection.closedAt !== null, { what: 'the socket closed' });
        expect(connection.closeCode).toBe(1009);
        await acknowledged(count);
      }
      const after = await memoryOf(holder.url);
      peak.rss = Math.max(peak.rss, after.rss);
      expect(await storedCount(holder.url)).toBe(stored);
      expect(after.rss - baseline!.rss).toBeLessThan(RSS_GROWTH_LIMIT);
      expect(holder.child.exitCode).toBeNull();
      console.log(
        `websocket fuzz: holder RSS ${Math.round(baseline!.rss / 2 ** 20)} MiB after 3 cases, ` +
          `peak ${Math.round(peak.rss / 2 ** 20)} MiB, end ${Math.round(after.rss / 2 ** 20)} MiB; ` +
          `heap ${Math.round(baseline!.heap / 2 ** 20)} → peak ${Math.round(peak.heap / 2 ** 20)} MiB`,
      );
    },
    spawnTestMs(1) + runs * 30_000,
  );
});
