/**
 * What the meeting passthrough costs over calling the platform directly, against the local
 * fake platform on 127.0.0.1 (test/support/fake-zoom.ts), each figure beside its baseline
 * measured in the same run:
 *
 * - GET /api/meetings/:id (our auth, validation, cached platform token, keep-alive upstream)
 *   against the same GET sent straight to the fake with a platform token; sequential and 20
 *   concurrent callers. The token endpoint is asked once for the whole run.
 * - the spec validation alone (src/platform-api: ajv per operation), in process: the validation
 *   of one full meeting-create body (every documented field) and of a query, per call; then
 *   POST /api/users/:userId/meetings with that body through the bridge against the same POST
 *   straight to the fake, so the validation's share of a real call is visible.
 * - a recording download streamed through the bridge against the same file read straight from
 *   the fake's storage: throughput, and the peak live memory (heap + array buffers, after a
 *   full GC at each sample) and RSS growth of this one process, which holds the fake, the
 *   bridge and the client alike.
 *
 *   npx ts-node --transpile-only bench/passthrough.ts [calls=500] [downloadMB=200]
 */
import { performance } from 'node:perf_hooks';
import { MEETING_PATH_RULES } from '../src/meetings/meeting-path-rules';
import { platformOperation } from '../src/platform-api/platform-operations';
import { PlatformRequestValidator } from '../src/platform-api/request-validator';
import { FakeZoom } from '../test/support/fake-zoom';
import { exampleOf } from '../test/support/platform-examples';
import { readStreamed } from '../test/support/streamed-read';
import { startTestApp } from '../test/support/test-app';
import { helpIfAsked } from './support';

helpIfAsked(__filename, '[calls=500] [download-mb=200]');

const CALLS = Math.min(Number(process.argv[2] ?? 500), 5_000);
const DOWNLOAD_MB = Math.min(Number(process.argv[3] ?? 200), 1_000);
const CONCURRENCY = 20;
const DEADLINE = Date.now() + 5 * 60_000;
const MB = 1024 * 1024;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

async function expectOk(res: Response): Promise<void> {
  await res.arrayBuffer();
  if (res.status !== 200 && res.status !== 201) throw new Error(`status ${res.status}`);
}

/** Microseconds per validation of one request, after a warm-up (compilation excluded). */
function measureValidation(): { compileMs: number; bodyUs: number; queryUs: number } {
  const started = performance.now();
  const validator = new PlatformRequestValidator();
  const compileMs = performance.now() - started;
  const create = platformOperation('meetingCreate');
  const list = platformOperation('meetings');
  const body = exampleOf(create.body?.schema ?? {});
  const query = new URLSearchParams('type=scheduled&page_size=30&next_page_token=abc');
  const perCall = (run: () => void) => {
    for (let i = 0; i < 1000; i++) run();
    const n = 20_000;
    const start = performance.now();
    for (let i = 0; i < n; i++) run();
    return ((performance.now() - start) * 1000) / n;
  };
  const bodyUs = perCall(() =>
    validator.validate(create, { params: { userId: 'u1' }, query, body }, MEETING_PATH_RULES),
  );
  const queryUs = perCall(() =>
    validator.validate(list, { params: { userId: 'u1' }, query }, MEETING_PATH_RULES),
  );
  return { compileMs, bodyUs, queryUs };
}

/** Latency of `calls` sequential GETs, and the throughput of CONCURRENCY callers. */
async function measureCalls(label: string, get: () => Promise<Response>) {
  for (let i = 0; i < 20; i++) await expectOk(await get()); // warm-up
  const took: number[] = [];
  for (let i = 0; i < CALLS && Date.now() < DEADLINE; i++) {
    const start = performance.now();
    await expectOk(await get());
    took.push(performance.now() - start);
  }
  const start = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (done < CALLS && Date.now() < DEADLINE) {
        done++;
        await expectOk(await get());
      }
    }),
  );
  const perSecond = done / ((performance.now() - start) / 1000);
  const p50 = percentile(took, 0.5);
  console.log(
    `${label.padEnd(34)} p50 ${p50.toFixed(2).padStart(6)} ms  p95 ${percentile(took, 0.95)
      .toFixed(2)
      .padStart(6)} ms  ${CONCURRENCY} callers ${perSecond.toFixed(0).padStart(5)} req/s`,
  );
  return { p50, perSecond };
}

/** Reads a download to the end, hashing it; samples live memory every 10 MB. */
async function measureDownload(label: string, open: () => Promise<Response>, sha256: string) {
  const read = await readStreamed(open, 10 * MB);
  if (read.res.status !== 200) throw new Error(`${label}: status ${read.res.status}`);
  if (read.sha256 !== sha256) throw new Error(`${label}: bytes differ`);
  const rate = read.bytes / MB / read.seconds;
  console.log(
    `${label.padEnd(34)} ${rate.toFixed(0).padStart(5)} MB/s  peak live +${(read.peakLiveBytes / MB).toFixed(1)} MB` +
      `  peak RSS +${(read.peakRssBytes / MB).toFixed(1)} MB  (${read.bytes / MB} MB)`,
  );
  return { rate, peakLive: read.peakLiveBytes };
}

async function main(): Promise<void> {
  const fake = await FakeZoom.start();
  const t = await startTestApp({ env: { ...fake.env(), LOG_LEVEL: 'warn' } });
  try {
    const host = fake.addUser();
    const meeting = fake.addMeeting(host.id);
    const file = {
      id: 'bench-0001',
      file_type: 'MP4',
      file_extension: 'MP4',
      file_size: DOWNLOAD_MB * MB,
      recording_type: 'shared_screen',
      content_type: 'video/mp4',
    };
    fake.addRecording(meeting, [file]);
    const token = await t.token();

    // A platform token of the fake's own, for the baseline calls.
    const tokenRes = await fetch(`${fake.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `grant_type=account_credentials&account_id=${fake.accountId}`,
    });
    const platformToken = ((await tokenRes.json()) as { access_token: string }).access_token;
    const tokensBefore = fake.tokenRequests;

    const v = measureValidation();
    console.log(
      `Spec validation (ajv, in process): compiling the 156 operations ${v.compileMs.toFixed(0)} ms ` +
        `once; per call ${v.bodyUs.toFixed(1)} µs for a full meeting-create body, ` +
        `${v.queryUs.toFixed(1)} µs for a path and query\n`,
    );

    const createBody = JSON.stringify(
      exampleOf(platformOperation('meetingCreate').body?.schema ?? {}),
    );
    console.log(`POST a meeting with every documented field (${createBody.length} bytes)\n`);
    const directCreate = await measureCalls('direct to the platform (baseline)', () =>
      fetch(`${fake.baseUrl}/v2/users/${host.id}/meetings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${platformToken}`, 'content-type': 'application/json' },
        body: createBody,
      }),
    );
    const bridgedCreate = await measureCalls('through the bridge (validated)', () =>
      fetch(`${t.baseUrl}/api/users/${host.id}/meetings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: createBody,
      }),
    );
    console.log(
      `  bridge - direct: p50 +${(bridgedCreate.p50 - directCreate.p50).toFixed(2)} ms per call, ` +
        `of which the body validation is ${(v.bodyUs / 1000).toFixed(3)} ms\n`,
    );

    console.log(
      `GET a meeting: ${CALLS} sequential calls, then ${CALLS} from ${CONCURRENCY} callers\n`,
    );
    const direct = await measureCalls('direct to the platform (baseline)', () =>
      fetch(`${fake.baseUrl}/v2/meetings/${meeting.id}`, {
        headers: { authorization: `Bearer ${platformToken}` },
      }),
    );
    const bridged = await measureCalls('through the bridge', () =>
      fetch(`${t.baseUrl}/api/meetings/${meeting.id}`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    console.log(
      `  bridge/direct: p50 x${(bridged.p50 / direct.p50).toFixed(2)}, throughput x${(
        bridged.perSecond / direct.perSecond
      ).toFixed(2)}; platform token requests for all bridged calls: ${
        fake.tokenRequests - tokensBefore
      }\n`,
    );

    console.log(`Download a ${DOWNLOAD_MB} MB recording file\n`);
    const sha256 = fake.fileSha256(file);
    fake.redirectDownloads = false;
    const directDownload = () =>
      fetch(`${fake.baseUrl}/rec/download/${file.id}`, {
        headers: { authorization: `Bearer ${platformToken}` },
      });
    const bridgedDownload = () =>
      fetch(`${t.baseUrl}/api/meetings/${meeting.id}/recordings/${file.id}/download`, {
        headers: { authorization: `Bearer ${token}` },
      });
    // Warm both paths (connections, parsers, compiled code) before measuring.
    for (const open of [directDownload, bridgedDownload]) {
      const res = await open();
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      await reader.cancel();
    }
    const d = await measureDownload('direct from the platform (baseline)', directDownload, sha256);
    const b = await measureDownload('through the bridge', bridgedDownload, sha256);
    console.log(
      `  bridge/direct: throughput x${(b.rate / d.rate).toFixed(2)}; extra peak live memory ` +
        `${((b.peakLive - d.peakLive) / MB).toFixed(1)} MB for a ${DOWNLOAD_MB} MB file`,
    );
  } finally {
    await t.close();
    await fake.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
