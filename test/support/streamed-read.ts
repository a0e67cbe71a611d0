import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full collection before each memory sample measures what is live, not garbage waiting for
// the collector: a process that buffers a whole file holds it live, a streaming one does not.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export interface StreamedRead {
  /** The response (its body consumed). */
  res: Response;
  bytes: number;
  sha256: string;
  /** Largest growth of heap + array buffers over the start, after a full GC. */
  peakLiveBytes: number;
  /** Largest growth of the resident set over the start. */
  peakRssBytes: number;
  /** Reading time, without the time spent sampling. */
  seconds: number;
}

/**
 * Sends a request and reads its response body to the end chunk by chunk, hashing it, and
 * samples this process's memory every `sampleEvery` bytes. Whatever else runs in the process
 * (a fake server, the app) is measured too. The baseline is taken before the request is sent,
 * so a server that gathers the whole body before answering is caught as well.
 */
export async function readStreamed(
  send: () => Promise<Response>,
  sampleEvery: number,
): Promise<StreamedRead> {
  gc();
  const base = process.memoryUsage();
  let peakLiveBytes = 0;
  let peakRssBytes = 0;
  let sampling = 0;
  const sample = () => {
    const start = performance.now();
    gc();
    const now = process.memoryUsage();
    peakLiveBytes = Math.max(
      peakLiveBytes,
      now.heapUsed + now.arrayBuffers - base.heapUsed - base.arrayBuffers,
    );
    peakRssBytes = Math.max(peakRssBytes, now.rss - base.rss);
    sampling += performance.now() - start;
  };
  const start = performance.now();
  const res = await send();
  sample();
  const hash = createHash('sha256');
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let bytes = 0;
  let next = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
    bytes += value.length;
    if (bytes >= next) {
      sample();
      next += sampleEvery;
    }
  }
  sample();
  return {
    res,
    bytes,
    sha256: hash.digest('hex'),
    peakLiveBytes,
    peakRssBytes,
    seconds: (performance.now() - start - sampling) / 1000,
  };
}
